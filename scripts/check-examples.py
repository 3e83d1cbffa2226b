#!/usr/bin/env python3
"""Lists the public functions of src/ whose doc comment has no code block (a ``` line), that
is no `# Examples`; exits 1 if there is one. STYLE.md wants an example on every public item.

A public function is a `pub fn` (not `pub(crate)`, `pub(super)`, `pub(in ..)`) in a module or
an inherent `impl` block, or any `fn` of a `pub trait`. The crate warns on `unreachable_pub`,
so a `pub fn` there is part of the API. Left out:

- functions of trait impls (`impl Trait for Type`): rustdoc shows the trait's docs, which are
  checked where the trait is defined (ours) or are the standard library's;
- items and modules under `#[cfg(test)]`, `#[cfg(loom)]` or `#[doc(hidden)]`, and files whose
  `mod` line is (not in a user's build, or not in the docs);
- inline modules that are neither `pub` nor re-exported from (a sealed trait's `mod sealed`);
- function bodies, and bodies of other items (`macro_rules!`, structs, constants).

Reads the source only: no build. Usage: scripts/check-examples.py [DIR]   (default: src)
Standard library only.
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "src"
# Attributes that take an item out of a user's build or out of the docs.
SKIP_ATTR = re.compile(r"#\[\s*(cfg\s*\(\s*(test|loom)\s*\)|doc\s*\(\s*hidden\s*\))\s*\]")
VIS = r"(?P<vis>pub(?P<restricted>\s*\([^)]*\))?\s+)?"
FN = re.compile(VIS + r"(default\s+)?(const\s+)?(async\s+)?(unsafe\s+)?"
                r"(extern\s+(\"[^\"]*\"\s+)?)?fn\s+(?P<name>\w+)")
TRAIT = re.compile(VIS + r"(unsafe\s+)?(auto\s+)?trait\s+(?P<name>\w+)")
IMPL = re.compile(r"(unsafe\s+)?impl\b")
MOD = re.compile(VIS + r"mod\s+(?P<name>\w+)")


def code_lines(text):
    """Each line's code, with comments removed and string and char literals emptied."""
    out, cur = [], []
    i, n = 0, len(text)
    block = 0  # nesting depth of /* */ comments
    while i < n:
        c = text[i]
        nxt = text[i + 1] if i + 1 < n else ""
        if c == "\n":
            out.append("".join(cur))
            cur = []
            i += 1
        elif block:
            if c == "/" and nxt == "*":
                block, i = block + 1, i + 2
            elif c == "*" and nxt == "/":
                block, i = block - 1, i + 2
            else:
                i += 1
        elif c == "/" and nxt == "/":
            while i < n and text[i] != "\n":
                i += 1
        elif c == "/" and nxt == "*":
            block, i = 1, i + 2
        elif c == '"' or (c == "r" and re.match(r'r#*"', text[i:i + 130])
                          and not (cur and (cur[-1].isalnum() or cur[-1] == "_"))):
            if c == "r":
                hashes = re.match(r'r(#*)"', text[i:]).group(1)
                end = text.find('"' + hashes, i + len(hashes) + 2)
                end = n if end < 0 else end + 1 + len(hashes)
            else:
                end = i + 1
                while end < n and text[end] != '"':
                    end += 2 if text[end] == "\\" else 1
                end += 1
            cur.append('""')
            # Keep the line count: a string may span lines.
            for _ in range(text.count("\n", i, end)):
                out.append("".join(cur))
                cur = []
            i = end
        elif c == "'":
            m = re.match(r"'(\\(x[0-9a-fA-F]{2}|u\{[0-9a-fA-F]+\}|.)|[^\\'\n])'", text[i:])
            if m:  # a char literal, not a lifetime
                cur.append("' '")
                i += m.end()
            else:
                cur.append(c)
                i += 1
        else:
            cur.append(c)
            i += 1
    out.append("".join(cur))
    return out


def leading_attrs(code):
    """Splits `#[..] #[..] rest` into the attributes and the rest."""
    attrs = []
    code = code.strip()
    while code.startswith("#[") or code.startswith("#!["):
        depth, j = 0, 0
        for j, ch in enumerate(code):
            if ch == "[":
                depth += 1
            elif ch == "]":
                depth -= 1
                if depth == 0:
                    break
        if depth:  # continues on the next line
            return attrs, code, True
        attrs.append(code[:j + 1])
        code = code[j + 1:].strip()
    return attrs, code, False


def impl_name(header):
    """`impl<T: X> Foo<T> where ..` -> ("Foo", is a trait impl)."""
    rest = IMPL.sub("", header, count=1).strip()
    if rest.startswith("<"):
        depth = 0
        for j, ch in enumerate(rest):
            depth += {"<": 1, ">": -1}.get(ch, 0)
            if depth == 0 and ch == ">":
                rest = rest[j + 1:].strip()
                break
    rest = re.split(r"\bwhere\b", rest)[0]
    is_trait = re.search(r"\bfor\b(?!\s*<)", rest) is not None
    m = re.match(r"[\w:]+", rest)
    return (m.group(0).split("::")[-1] if m else "?"), is_trait


def scan(path, report):
    whole = path.read_text()
    raw = whole.splitlines()
    code = code_lines(whole)
    # Scopes: (kind, name, scanned) where kind is mod/impl/trait/other.
    stack = [("mod", "", True)]
    docs, attrs = [], []
    attr_cont = ""  # an attribute that continues on the next line
    pending = None  # an item header waiting for its `{` or `;`: (kind, name, scanned)
    child_mods = []
    for lineno, (r, c) in enumerate(zip(raw, code), start=1):
        stripped = r.strip()
        kind, _, scanned = stack[-1]
        if pending is None and stripped.startswith("///"):
            docs.append(stripped)
            continue
        if not c.strip():
            continue
        text = c
        if pending is None and scanned:
            if attr_cont:
                text = attr_cont + " " + text
                attr_cont = ""
            new_attrs, text, cont = leading_attrs(text)
            attrs += new_attrs
            if cont:
                attr_cont = text
                continue
            if not text:
                continue
            skip = any(SKIP_ATTR.search(a) for a in attrs)
            in_trait = kind == "trait"
            if m := FN.match(text):
                public = (in_trait and not m.group("vis")) or (
                    not in_trait and m.group("vis") and not m.group("restricted"))
                if public and not skip and not any("```" in d for d in docs):
                    owner = stack[-1][1]
                    report.append((path, lineno, f"{owner}::" * bool(owner) + m.group("name")))
                pending = ("other", "", False)
            elif m := TRAIT.match(text):
                public = m.group("vis") and not m.group("restricted")
                pending = ("trait", m.group("name"), bool(public) and not skip)
            elif IMPL.match(text):
                pending = ("impl?", "", not skip)
                header = ""
            elif m := MOD.match(text):
                name = m.group("name")
                if "{" not in text:  # `mod name;`: a file
                    pending = ("mod", "", not skip)
                    if not skip:
                        child_mods.append(name)
                else:
                    # An inline module that is not `pub` holds API only if it is re-exported
                    # (`mod sealed { pub trait Sealed .. }` is a seal users cannot name).
                    public = (m.group("vis") and not m.group("restricted")) or re.search(
                        rf"pub\s+use\s+(self::)?{name}::", whole)
                    pending = ("mod", "", bool(public) and not skip)
            else:
                pending = ("other", "", False)
            docs, attrs = [], []
        elif pending is None:
            pending = ("other", "", False)
        # Braces: the first `{` at this level opens the pending item's scope; a `;` first
        # ends it (a declaration).
        depth = 0
        for ch in text:
            if pending is not None and pending[0] == "impl?":
                header += ch
            if ch in "([":
                depth += 1
            elif ch in ")]":
                depth -= 1
            elif ch == "{":
                if pending is None:
                    stack.append(("other", "", False))
                else:
                    if pending[0] == "impl?":
                        name, is_trait = impl_name(header[:-1])
                        pending = ("impl", name, pending[2] and not is_trait)
                    stack.append(pending)
                    pending = None
            elif ch == "}":
                if len(stack) > 1:
                    stack.pop()
                pending = None
            elif ch == ";" and depth <= 0 and pending is not None:
                pending = None
        if pending is not None and pending[0] == "impl?":
            header += " "
    return child_mods


def scan_build(report):
    """Scans the files reached from lib.rs through `mod` lines that are not skipped."""
    queue = [(SRC / "lib.rs", SRC)]
    while queue:
        path, child_dir = queue.pop()
        for name in scan(path, report):
            for cand in (child_dir / f"{name}.rs", child_dir / name / "mod.rs"):
                if cand.exists():
                    queue.append((cand, cand.parent / name if cand.name != "mod.rs"
                                  else cand.parent))
                    break


def main():
    report = []
    scan_build(report)
    for path, lineno, name in sorted(report, key=lambda x: (str(x[0]), x[1])):
        print(f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}:{lineno}: {name}")
    if report:
        print(f"check-examples: {len(report)} public functions without an example "
              "(a ``` block in their doc comment)")
        return 1
    print("check-examples: every public function has an example")
    return 0


if __name__ == "__main__":
    sys.exit(main())

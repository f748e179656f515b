"""The subsets of Streamlit's fonts under ``assets/vendor/fonts/`` (what ``ui.server.fonts`` serves in
place of the originals: a first visit's fonts were 600-770 kB, half of it an icon font of 4,009 icons
of which the app shows a few dozen).

- **Material Symbols Rounded** (Streamlit's icon font; an icon is a ligature: the text ``home`` drawn
  as one glyph): kept are the letters, digits and ``_``, and the icons whose names occur in
  Streamlit's JavaScript (as ``:material/name:`` or as a bare word: any word of its code that is an
  icon's name) or as ``:material/name:`` in this app's code and texts. Every other icon's glyph and
  ligature is dropped.
- **Source Sans 3 and Source Code Pro** (variable, upright and italic): kept are the variable axes,
  every OpenType feature and the Unicode blocks of :data:`TEXT_BLOCKS` (Latin with the accents of
  Western and Central European languages, Greek, punctuation, letterlike symbols, arrows,
  mathematical operators, shapes); dropped are Cyrillic, Vietnamese's extra letters (Latin Extended
  Additional), Latin Extended-B, IPA and most combining marks. A character outside them is
  drawn by the browser's next font (as every Chinese character is: these fonts have none).

Needs fonttools (requirements-dev.txt; the app itself does not). The output is deterministic for a
given fonttools, brotli and Streamlit: ``--check`` (the default) rebuilds every subset in memory and
compares it with the manifest's sha256; ``--write`` writes the files and the manifest.

    .venv/bin/python scripts/vendor_fonts.py            # check
    .venv/bin/python scripts/vendor_fonts.py --write    # after a Streamlit upgrade
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "assets" / "vendor" / "fonts"
MANIFEST = OUT / "manifest.json"

#: Unicode blocks kept in the text fonts (first, last code point)
TEXT_BLOCKS = (
    (0x0020, 0x007E),  # Basic Latin
    (0x00A0, 0x017F),  # Latin-1 Supplement, Latin Extended-A
    (0x0300, 0x0308),  # the common combining accents (grave to diaeresis; the macron of x̄)
    (0x0370, 0x03FF),  # Greek and Coptic
    (0x1D00, 0x1DBF),  # phonetic extensions (the modifier letters: superscript ᵀ, subscript ᵢ)
    (0x2000, 0x214F),  # punctuation, super- and subscripts, currency, letterlike symbols
    (0x2150, 0x23FF),  # number forms, arrows, mathematical operators, technical symbols
    (0x2460, 0x27FF),  # enclosed numbers, box drawing, shapes, symbols, dingbats, math arrows
    (0x2900, 0x2AFF),  # supplemental arrows, miscellaneous and supplemental mathematical symbols
    (0x2C60, 0x2C7F),  # Latin Extended-C (subscript ⱼ)
    (0xFB00, 0xFB06),  # the Latin ligatures (fi, fl, ...)
    (0xFFFD, 0xFFFD),  # the replacement character
)
#: Streamlit's text fonts subset here (its Source Serif is not drawn by this app: left whole)
TEXT_FONTS = re.compile(r"^(SourceSansVF|SourceCodeVF)-(Upright|Italic)\.ttf\.[^.]+\.woff2$")
ICON_FONT = re.compile(r"^MaterialSymbols-Rounded\.[^.]+\.woff2$")
MATERIAL = re.compile(r":material/([a-z0-9_]+):")
#: this app's files that may name an icon
APP_SOURCES = ("app.py", "ui/**/*.py", "pages/**/*.py", "pages/**/*.toml", "assets/**/*.toml")


def streamlit_media() -> tuple[str, Path]:
    import streamlit

    return streamlit.__version__, Path(streamlit.__file__).resolve().parent / "static" / "static" / "media"


def app_icons(root: Path = ROOT) -> set[str]:
    """The icon names this app's code and texts use (``:material/name:``)."""
    names: set[str] = set()
    for pattern in APP_SOURCES:
        for f in root.glob(pattern):
            names |= set(MATERIAL.findall(f.read_text(encoding="utf-8")))
    return names


def streamlit_words(media: Path) -> set[str]:
    """Every lowercase word of Streamlit's JavaScript (an icon it names is among them)."""
    words: set[str] = set()
    for js in sorted((media.parent / "js").glob("*.js")):
        words |= set(re.findall(r"[a-z0-9_]+", js.read_text(encoding="utf-8", errors="replace")))
    return words


def ligatures(font) -> dict[str, str]:
    """The icons of a Material Symbols font: ``{the text a ligature replaces: the glyph it draws}``
    (``home``, ``123``, ``1k`` ...: the glyphs' own names differ for some)."""
    spell = {g: chr(cp) for cp, g in font.getBestCmap().items() if cp < 0x80 and not chr(cp).isupper()}
    out = {}
    for lookup in font["GSUB"].table.LookupList.Lookup:
        for st in lookup.SubTable:
            st = getattr(st, "ExtSubTable", st)
            for first, ligs in getattr(st, "ligatures", {}).items():
                for lig in ligs:
                    out[spell[first] + "".join(spell[c] for c in lig.Component)] = lig.LigGlyph
    return out


def _load(path: Path):
    from fontTools.ttLib import TTFont

    # recalcTimestamp=False: the output must not depend on the day it is built
    return TTFont(str(path), recalcTimestamp=False)


def _save(font) -> bytes:
    buf = io.BytesIO()
    font.flavor = "woff2"
    font.save(buf)
    return buf.getvalue()


def _options():
    from fontTools import subset

    o = subset.Options()
    o.layout_features = ["*"]
    o.name_IDs = ["*"]
    o.name_languages = ["*"]
    o.notdef_outline = True
    return o


def subset_icons(path: Path, keep: set[str]) -> tuple[bytes, list[str]]:
    """The icon font with only the icons ``keep`` (those it has) and the characters that spell them."""
    from fontTools import subset

    font = _load(path)
    icons = ligatures(font)
    names = sorted(set(icons) & keep)
    spelling = {g for cp, g in font.getBestCmap().items() if cp < 0x80}
    opts = _options()
    opts.layout_closure = False  # the ligatures of other icons are not followed into the set
    s = subset.Subsetter(opts)
    s.populate(glyphs=sorted(spelling | {icons[n] for n in names} | {".notdef"}))
    s.subset(font)
    return _save(font), names


def subset_text(path: Path) -> bytes:
    from fontTools import subset

    font = _load(path)
    s = subset.Subsetter(_options())
    s.populate(unicodes=[cp for a, b in TEXT_BLOCKS for cp in range(a, b + 1)])
    s.subset(font)
    return _save(font)


def build() -> dict:
    """Every subset, in memory: ``{"streamlit": version, "fonts": {name: {...}}}`` with the bytes."""
    version, media = streamlit_media()
    keep = app_icons() | streamlit_words(media)
    fonts = {}
    for src in sorted(media.glob("*.woff2")):
        if ICON_FONT.match(src.name):
            body, names = subset_icons(src, keep)
            extra = {"icons": len(names), "app_icons": sorted(app_icons())}
        elif TEXT_FONTS.match(src.name):
            body, extra = subset_text(src), {"blocks": [f"{a:04X}-{b:04X}" for a, b in TEXT_BLOCKS]}
        else:
            continue
        raw = src.read_bytes()
        fonts[src.name] = {
            "file": src.name,
            "source_sha256": hashlib.sha256(raw).hexdigest(),
            "source_bytes": len(raw),
            "sha256": hashlib.sha256(body).hexdigest(),
            "bytes": len(body),
            **extra,
            "_body": body,
        }
    return {"streamlit": version, "fonts": fonts}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--write", action="store_true", help="write the subsets and the manifest")
    args = ap.parse_args(argv)
    built = build()
    if args.write:
        OUT.mkdir(parents=True, exist_ok=True)
        for old in OUT.glob("*.woff2"):
            if old.name not in built["fonts"]:
                old.unlink()
        for name, f in built["fonts"].items():
            (OUT / name).write_bytes(f["_body"])
    manifest = {
        "streamlit": built["streamlit"],
        "about": "Subsets of Streamlit's fonts, served in their place by ui/server/fonts.py; "
        "rebuilt and checked by scripts/vendor_fonts.py (fonttools).",
        "fonts": {n: {k: v for k, v in f.items() if k != "_body"} for n, f in built["fonts"].items()},
    }
    if args.write:
        MANIFEST.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    else:
        try:
            recorded = json.loads(MANIFEST.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            print(f"{MANIFEST}: {exc}", file=sys.stderr)
            return 1
        if recorded != manifest:
            print("the vendored font subsets differ from what this Streamlit and fonttools build", file=sys.stderr)
            return 1
    for name, f in built["fonts"].items():
        print(f"{name:48s} {f['source_bytes'] / 1024:7.1f} KiB -> {f['bytes'] / 1024:6.1f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())

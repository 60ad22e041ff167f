"""Rebuild the test documents in tests/data/documents and tests/data/documents-bad
(tests/data/documents/README.md says where their text comes from).

Needs LibreOffice (Debian: libreoffice-writer-nogui, libreoffice-impress-nogui), qpdf and
poppler-utils, and python-pptx (a kgservice dependency). Run from anywhere:

    python3 tests/data/documents-src/make.py

The outputs are committed; this script is how they were made, so a reviewer can make them
again and see that they are ordinary office files, not hand-crafted ones. LibreOffice stamps
creation dates into them, so a rebuild differs in bytes, not in text.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

SRC = Path(__file__).resolve().parent  # the sources: tests/data/documents-src
HERE = SRC.parent / "documents"  # the documents: tests/data/documents
BAD = SRC.parent / "documents-bad"  # the unreadable ones

# the slides' text: the Wikipedia articles named in each title (CC BY-SA 4.0), one sentence a bullet
SLIDES = [
    ("Four Olympic stories", ["Text from the Wikipedia articles named in each slide's title (CC BY-SA 4.0)."]),
    ("1904 Summer Olympics", [
        "The 1904 Summer Olympics, officially known as the Games of the III Olympiad, was an international "
        "multi-sport event which was celebrated in St. Louis, Missouri, in the United States from August 29 until "
        "September 3, 1904.",
        "The events were held at what is now known as Francis Field on the campus of Washington University in "
        "St. Louis.",
        "It was the first time that the Olympic Games were held outside Europe."]),
    ("Basketball at the 1936 Summer Olympics", [
        "Basketball at the 1936 Summer Olympics was the first appearance of the sport as an official medal event.",
        "The tournament was played between 7 August and 14 August 1936 in Berlin, Germany.",
        "23 nations entered the competition, making basketball the largest tournament of the team sports."]),
    ("Tug of war at the Summer Olympics", [
        "Tug of war was contested as a team event in the Summer Olympics at every Olympiad from 1900 to 1920.",
        "Originally the competition was entered by groups called clubs.",
        "In 1904 the United States won all three medals, and in 1908 the podium was occupied by three British "
        "teams."]),
    ("2024 Summer Olympics", [
        "The 2024 Summer Olympics, commonly known as Paris 2024, will be hosted in Paris from 2 to 18 August 2024.",
        "Paris previously hosted the 1900 Summer Olympics and the 1924 Summer Olympics.",
        "Paris will become the second city after London to host the Olympic Games three times."]),
    ("Two Olympians", [
        "Ambra Migliori (born 10 March 1984) is an Olympic swimmer from Italy.",
        "She swam for Italy at the 2004 Summer Olympics.",
        "Ralph Gomes (born June 13, 1937 in Uitvlugt) is a retired track and field athlete from Guyana.",
        "He competed in the middle-distances, and represented his native country at the 1960 Summer Olympics in Rome, "
        "Italy."]),
]


def soffice(args: list[str], cwd: Path) -> None:
    # a profile of its own: a LibreOffice already running for the user does not take the job
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(["soffice", f"-env:UserInstallation=file://{profile}", "--headless", *args], cwd=cwd,
                       check=True, capture_output=True)


def build(out: Path) -> None:
    from pptx import Presentation

    # PDF and DOCX: Writer reads the HTML sources (headings become Heading 1/2 styles, the
    # page-break-before headings start pages 2 and 3) and exports them
    soffice(["--infilter=HTML (StarWriter)", "--convert-to", "pdf", "--outdir", str(out), str(SRC / "rivers.html")],
            out)
    soffice(["--infilter=HTML (StarWriter)", "--convert-to", "docx:MS Word 2007 XML", "--outdir", str(out),
             str(SRC / "airports.html")], out)
    # PPTX: python-pptx lays the slides out, Impress saves them as PowerPoint does
    prs = Presentation()
    for i, (title, bullets) in enumerate(SLIDES):
        slide = prs.slides.add_slide(prs.slide_layouts[0 if i == 0 else 1])
        slide.shapes.title.text = title
        body = slide.placeholders[1].text_frame
        body.text = bullets[0]
        for b in bullets[1:]:
            body.add_paragraph().text = b
    draft = out / "draft"
    draft.mkdir()
    prs.save(draft / "olympics.pptx")
    soffice(["--convert-to", "pptx:Impress MS PowerPoint 2007 XML", "--outdir", str(out), str(draft / "olympics.pptx")],
            out)


def bad_files(out: Path) -> None:
    """The unreadable inputs: each one's test is in tests/documents/test_bad_files.py."""
    subprocess.run(["qpdf", "--encrypt", "secret", "owner-secret", "256", "--", str(HERE / "rivers.pdf"),
                    str(out / "encrypted.pdf")], check=True)
    # a scan: page 1 as a picture (no text layer), the way a scanner's PDF is made
    subprocess.run(["pdftoppm", "-r", "60", "-f", "1", "-l", "1", "-png", str(HERE / "rivers.pdf"),
                    str(out / "scan")], check=True)
    png = next(out.glob("scan*.png"))
    png.rename(out / "scan.png")
    soffice(["--convert-to", "pdf", "--outdir", str(out), str(out / "scan.png")], out)
    (out / "scan.png").unlink()
    (out / "scanned.pdf").unlink(missing_ok=True)
    (out / "scan.pdf").rename(out / "scanned.pdf")
    # a DOCX cut short (an interrupted download): the zip's central directory is missing
    data = (HERE / "airports.docx").read_bytes()
    (out / "truncated.docx").write_bytes(data[: len(data) // 2])
    # a zip that is no Word document, and a web page saved under a PDF's name
    (out / "not-a-deck.pptx").write_bytes((HERE / "airports.docx").read_bytes())
    shutil.copyfile(HERE / "universities.html", out / "minutes.pdf")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        build(out)
        for name in ("rivers.pdf", "airports.docx", "olympics.pptx"):
            shutil.copyfile(out / name, HERE / name)
    BAD.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        bad_files(out)
        for f in out.iterdir():
            if f.is_file():
                shutil.copyfile(f, BAD / f.name)


if __name__ == "__main__":
    main()

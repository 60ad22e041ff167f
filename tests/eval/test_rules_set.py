"""``rules_set.py``: the rules-extraction set from either source (``--set musique|hotpotqa``),
on a two-question HotpotQA folder written here (the shape of HippoRAG's ``legacy`` files)."""

from __future__ import annotations

import json
from pathlib import Path

from scripts.eval import rules_set


def _hotpotqa(folder: Path) -> Path:
    corpus = {"Hank Snow": ["Hank Snow was born in Nova Scotia.", " He lived in Nashville."],
              "Nova Scotia": ["Nova Scotia is a province of Canada."],
              "Cheese": ["Cheese is a dairy product."]}
    qs = [{"_id": "q1", "question": "Which country holds the province where Hank Snow was born?", "type": "bridge",
           "answer": "Canada", "supporting_facts": [["Hank Snow", 0], ["Nova Scotia", 0]],
           "context": [[t, s] for t, s in corpus.items()]},
          {"_id": "q2", "question": "Is cheese a dairy product?", "type": "comparison", "answer": "yes",
           "supporting_facts": [["Cheese", 0], ["Cheese", 0]], "context": [["Cheese", corpus["Cheese"]]]}]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "hotpotqa_train.json").write_text(json.dumps(qs), "utf-8")
    (folder / "hotpotqa_train_corpus.json").write_text(json.dumps(corpus), "utf-8")
    return folder


def test_hotpotqa_set_keeps_the_questions_and_takes_the_rules_triples(tmp_path):
    out = tmp_path / "h.json"
    assert rules_set.main(["--set", "hotpotqa", "--dir", str(_hotpotqa(tmp_path / "src")), "--out", str(out)]) == 0
    ds = json.loads(out.read_text("utf-8"))
    assert ds["name"] == "hotpotqa-rules"
    by_title = {p["title"]: p for p in ds["passages"]}
    assert [p["id"] for p in ds["passages"]] == ["h0000", "h0001", "h0002"]
    # the rules split "was born in" and carry the title for "He"; the triples are the extraction's
    assert ["Hank Snow", "born in", "Nova Scotia"] in by_title["Hank Snow"]["triples"]
    assert by_title["Hank Snow"]["triples"] == rules_set.rules_triples("Hank Snow", by_title["Hank Snow"]["text"])
    q1, q2 = ds["questions"]
    assert (q1["id"], q1["gold"], q1["type"]) == ("q1", ["h0000", "h0001"], "bridge")
    assert (q2["gold"], q2["type"]) == (["h0002"], "comparison")


def test_default_out_is_named_after_the_set(tmp_path, monkeypatch):
    monkeypatch.setattr(rules_set, "CACHE", tmp_path / "cache")
    assert rules_set.main(["--set", "hotpotqa", "--dir", str(_hotpotqa(tmp_path / "src"))]) == 0
    assert json.loads((tmp_path / "cache" / "hotpotqa-rules.json").read_text("utf-8"))["name"] == "hotpotqa-rules"
    assert not (tmp_path / "cache" / "musique-rules.json").exists()


def test_the_musique_default_is_unchanged(tmp_path, monkeypatch, capsys):
    # no --set: MuSiQue, from KG_EVAL_MUSIQUE's folder (here: one without the corpus -> exit 2
    # naming the file), and --musique DIR still works as the folder
    monkeypatch.setitem(rules_set.SOURCES, "musique", (rules_set.load_musique, tmp_path / "none", "musique_train_corpus.json"))
    assert rules_set.main([]) == 2
    assert "musique_train_corpus.json" in capsys.readouterr().err
    assert rules_set.main(["--musique", str(tmp_path / "elsewhere")]) == 2
    assert str(tmp_path / "elsewhere") in capsys.readouterr().err


def test_bad_input_names_what_and_exits_2(tmp_path, capsys):
    # a HotpotQA folder without its files, and --musique beside --set hotpotqa
    assert rules_set.main(["--set", "hotpotqa", "--dir", str(tmp_path)]) == 2
    assert "hotpotqa_train_corpus.json" in capsys.readouterr().err
    assert rules_set.main(["--set", "hotpotqa", "--musique", str(tmp_path)]) == 2
    assert "not both" in capsys.readouterr().err
    # a corpus file whose questions name a title it lacks
    src = _hotpotqa(tmp_path / "src")
    qs = json.loads((src / "hotpotqa_train.json").read_text("utf-8"))
    qs[0]["supporting_facts"].append(["Nowhere", 0])
    (src / "hotpotqa_train.json").write_text(json.dumps(qs), "utf-8")
    assert rules_set.main(["--set", "hotpotqa", "--dir", str(src), "--out", str(tmp_path / "x.json")]) == 2
    assert "Nowhere" in capsys.readouterr().err

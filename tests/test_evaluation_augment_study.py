"""examples/augment_study.py: the augmentation study's machinery end to end (``--quick``: 3 demonstrations, one copy,
one training seed, a couple of evaluation episodes; it checks the pipeline, not the result), its parts resuming, and
the verdict computed from the numbers it states."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest

from pixelrig.datasets import open_dataset

pytest.importorskip("torch")
pytest.importorskip("h5py")
pytest.importorskip("kornia")
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
import augment_study as study  # noqa: E402 (the example, from its folder)


def test_quick_runs_every_part_and_a_second_run_resumes_without_redoing_any(tmp_path: Path) -> None:
    """The four arms are trained on the right data (c and d on the source plus its re-rendered copy, whose actions
    are the source's), evaluated under control, test_hard and the other factors on the same unseen seeds, and the
    JSON holds each arm's success per factor with Wilson intervals, the verdict, and each part's time. Run again, every
    part finds its work done: the models, evaluations and results stay as they were."""
    out = tmp_path / "quick"
    assert study.main(["--quick", "--out", str(out)]) == 0
    data = json.loads((out / "augment_study.json").read_text())
    quick = study.QUICK
    task = quick.tasks[0]
    assert (out / "augment_study.png").stat().st_size > 10_000
    assert data["factors"] == ["control", "test_hard", "light"]
    table = data["results"][task]["table"]
    assert sorted(table) == ["a", "b", "c", "d"]
    for arm in table.values():
        for factor, cell in arm.items():
            assert cell["n"] == (quick.episodes if factor in ("control", "test_hard") else quick.factor_episodes)
            assert 0.0 <= cell["ci95"][0] <= cell["pc"] <= cell["ci95"][1] <= 100.0
    assert set(data["results"][task]["verdict"]) >= {"c_recovers_half_of_a_drop", "c_beats_b_by_10_points",
                                                    "supported"}
    assert {key.split("/")[0] for key in data["times_s"]} == {"collect", "augment", "load", "train", "eval"}
    table_md = study.markdown_table(data)
    assert "| (c) re-rendered copies under train looks |" in table_md
    assert table_md.count("\n| (") == 4 and "Verdict: (a) drops" in table_md

    source = open_dataset(out / "data" / "PandaLift" / "demos.hdf5")
    augmented = open_dataset(out / "data" / "PandaLift" / "augmented.hdf5")
    try:
        n = source.num_episodes
        assert n == quick.demos and augmented.num_episodes == n * (1 + quick.copies)
        for e in range(n):
            actions = np.stack([f.action for f in source.frames(e)])
            copy = n + e
            assert augmented.episode_attrs(copy)["source_episode"] == e
            np.testing.assert_array_equal(np.stack([f.action for f in augmented.frames(copy)]), actions)
    finally:
        source.close()
        augmented.close()
    trained = {p.name: json.loads(p.read_text()) for p in (out / "models" / "PandaLift").glob("*.json")
               if not p.name.endswith(".rig.json")}
    assert sorted(trained) == ["a-s0.json", "b-s0.json", "c-s0.json", "d-s0.json"]
    assert len({t["steps"] for t in trained.values()}) == 1  # equal compute in every arm
    assert trained["c-s0.json"]["frames"] == (1 + quick.copies) * trained["a-s0.json"]["frames"]
    assert [t["config"]["jitter"] for _, t in sorted(trained.items())] == [False, True, False, True]

    stamps = {p: p.stat().st_mtime_ns for p in out.rglob("*") if p.is_file() and p.suffix in (".pt", ".jsonl")}
    assert study.main(["--quick", "--out", str(out)]) == 0
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps
    assert json.loads((out / "augment_study.json").read_text())["results"] == data["results"]


def test_the_command_line_names_unknown_parts_and_tasks(capsys: pytest.CaptureFixture[str]) -> None:
    for argv, message in ((["--parts", "train,fit"], "--parts ['fit']: the parts are ['collect', 'augment', 'train', "
                                                       "'eval', 'report']"),
                          (["--tasks", "PandaLift,PandaPush"], "--tasks ['PandaPush']: the study's tasks are "
                                                               "['PandaLift', 'PandaPickPlace']")):
        with pytest.raises(SystemExit):
            study.main(argv)
        assert message in capsys.readouterr().err


def test_merge_joins_runs_of_some_tasks_into_the_study_s_json(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    """Runs that each did some tasks (``--tasks``) join into one JSON, as one run of all would have written it: every
    task's table and verdict kept, the part times together, the verdict over both; a task twice, runs of different
    settings and a file that is not a study's are refused, naming the problem, and nothing is written."""
    lift = json.loads((Path(__file__).resolve().parents[1] / "docs" / "augment_study_lift.json").read_text())
    other = json.loads(json.dumps(lift).replace("PandaLift", "PandaPickPlace"))
    other["results"]["pixelrig/PandaPickPlace-v0"]["verdict"]["supported"] = True
    paths = []
    for name, data in (("lift", lift), ("other", other)):
        paths.append(tmp_path / f"{name}.json")
        paths[-1].write_text(json.dumps(data))
    out = tmp_path / "study.json"
    assert study.main(["--merge", *map(str, paths), "--json", str(out)]) == 0
    merged = json.loads(out.read_text())
    assert merged["results"] == {**lift["results"], **other["results"]}
    assert merged["study"]["tasks"] == ["pixelrig/PandaLift-v0", "pixelrig/PandaPickPlace-v0"]
    assert merged["study"]["seeds"] == 3 and merged["factors"] == lift["factors"]
    assert merged["times_s"] == {**lift["times_s"], **other["times_s"]}
    assert merged["hours"] == pytest.approx(lift["hours"] + other["hours"])
    assert merged["supported"] is False  # Lift's verdict is not supported
    assert study.markdown_table(merged) in capsys.readouterr().out and out.with_suffix(".png").stat().st_size > 10_000
    changed = json.loads(json.dumps(other))
    changed["study"]["episodes"] = 50
    (tmp_path / "changed.json").write_text(json.dumps(changed))
    (tmp_path / "foreign.json").write_text(json.dumps({"results": {}}))
    for files, message in (([paths[0], paths[0]], "has tasks ['pixelrig/PandaLift-v0'] again"),
                           ([paths[0], tmp_path / "changed.json"], "differs from the first in ['study.episodes']"),
                           ([paths[0], tmp_path / "foreign.json"], "a file has no 'study'"),
                           ([paths[0], tmp_path / "missing.json"], "no such file")):
        with pytest.raises(SystemExit):
            study.main(["--merge", *map(str, files), "--json", str(tmp_path / "refused.json")])
        assert message in capsys.readouterr().err
        assert not (tmp_path / "refused.json").exists()


def rate(successes: int, n: int) -> dict:
    return study.rate(successes, n)


def test_the_verdict_follows_the_hypothesis_as_the_issue_states_it() -> None:
    """(c) must recover at least half of (a)'s control -> test_hard drop and beat (b) by 10 points with intervals
    apart; each half fails on its own."""
    table = {"a": {"control": rate(90, 100), "test_hard": rate(30, 100)},
             "b": {"control": rate(90, 100), "test_hard": rate(40, 100)},
             "c": {"control": rate(90, 100), "test_hard": rate(62, 100)}}
    v = study.verdict(table)
    assert v["a_drop_control_to_test_hard"] == pytest.approx(60.0) and v["half_of_a_drop"] == pytest.approx(30.0)
    assert v["c_minus_a_on_test_hard"] == pytest.approx(32.0) and v["c_recovers_half_of_a_drop"]
    assert v["c_minus_b_on_test_hard"] == pytest.approx(22.0) and v["intervals_apart"] and v["supported"]
    table["c"]["test_hard"] = rate(58, 100)  # +28 over a: short of half the drop; +18 over b, intervals apart?
    v = study.verdict(table)
    assert not v["c_recovers_half_of_a_drop"] and not v["supported"]
    table["c"]["test_hard"] = rate(62, 100)
    table["b"]["test_hard"] = rate(50, 100)  # 12 points, but the intervals overlap at n = 100
    v = study.verdict(table)
    assert v["c_minus_b_on_test_hard"] == pytest.approx(12.0) and not v["intervals_apart"] and not v["supported"]


def test_findings_name_the_factors_whose_intervals_are_apart() -> None:
    """A factor is named only where the two arms' 95% intervals do not overlap, on the side they fall."""
    table = {"a": {"x": rate(50, 100), "y": rate(50, 100), "z": rate(90, 100)},
             "b": {"x": rate(50, 100), "y": rate(55, 100), "z": rate(50, 100)},
             "c": {"x": rate(80, 100), "y": rate(58, 100), "z": rate(60, 100)}}
    assert study.findings(table, ["x", "y", "z"]) == (
        "Intervals apart: (c) above (a) on x; (c) below (a) on z; (b) above (a) on none; (b) below (a) on z.")


def test_the_documented_result_is_the_study_s() -> None:
    """docs/augment_study.json is the two tasks' runs joined (``--merge`` of docs/augment_study_lift.json and
    docs/augment_study_pickplace.json); the README's and docs/augment_study.md's tables, findings and verdicts are
    what the report writes from it; each task is a full run (3 seeds, 100 episodes of control and test_hard, 30 of
    each other factor); the README's time and verdict are the JSON's."""
    repo = Path(__file__).resolve().parents[1]
    docs = repo / "docs"
    data = json.loads((docs / "augment_study.json").read_text())
    parts = [json.loads((docs / f"augment_study_{name}.json").read_text()) for name in ("lift", "pickplace")]
    assert data == json.loads(json.dumps(study.merge(parts)))
    assert list(data["results"]) == ["pixelrig/PandaLift-v0", "pixelrig/PandaPickPlace-v0"]
    for page in (docs / "augment_study.md", repo / "README.md"):
        text = page.read_text()
        block = text[text.index("<!-- augment-table:start (docs/augment_study.json) -->"):
                     text.index("<!-- augment-table:end -->")]
        assert block.split("-->", 1)[1].strip() == study.markdown_table(data).strip(), page.name
    for task, result in data["results"].items():
        cells = [c for arm in result["table"].values() for c in arm.values()]
        assert {c["n"] for c in cells} == {300, 90}, task
    assert data["study"]["seeds"] == 3 and data["study"]["demos"] == 200 and data["study"]["copies"] == 4
    text = (docs / "augment_study.md").read_text()
    block = text[text.index("<!-- augment-times:start (docs/augment_study.json) -->"):
                 text.index("<!-- augment-times:end -->")]
    assert block.split("-->", 1)[1].strip() == study.times_table(data).strip()
    readme = (repo / "README.md").read_text()
    verdict = "supported" if data["supported"] else "not supported"
    assert f"the hypothesis is **{verdict}**" in readme
    assert f"{data['hours']:.1f} hours of these 2 cores" in readme
    # the figures the README's and the page's prose quote (lines joined)
    lift, pick = (data["results"][t]["table"] for t in ("pixelrig/PandaLift-v0", "pixelrig/PandaPickPlace-v0"))
    page = " ".join((docs / "augment_study.md").read_text().split())
    readme = " ".join(readme.split())

    def pc(cell: dict) -> str:
        return f"{cell['pc']:.0f}%"

    texture = f"the table's texture ({pc(lift['a']['table_texture'])} to {pc(lift['c']['table_texture'])})"
    assert f"BC learns PandaLift ({pc(lift['a']['control'])} of control" in readme
    assert f"barely PandaPickPlace ({pc(pick['a']['control'])})" in readme and texture in readme
    assert f"the task ({pc(lift['a']['control'])} of control" in page and texture in page
    assert f"the task, {pc(pick['a']['control'])} of control" in page
    assert study.findings(lift, data["factors"]).startswith("Intervals apart: (c) above (a) on table_texture;")
    assert all(pc(pick[arm]["test_hard"]) == "0%" for arm in "abcd")
    hard = sorted(lift[arm]["test_hard"]["pc"] for arm in "abcd")
    assert f"({round(hard[0])}–{round(hard[-1])}%)" in page
    assert f"({pc(lift['a']['control'])} to {pc(lift['c']['control'])})" in page

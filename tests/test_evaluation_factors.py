"""The factor registry: the contract's names, ``control`` first and always run, unknown names refused with the known
ones listed, each factor's parameters recorded as plain data, and the sensor factors' camera changes."""

from __future__ import annotations

import json
import math

import pytest

from pixelrig import Camera, Randomization
from pixelrig.evaluation.factors import FACTORS, Factor, factor_names, focal_length, preset_depth_noise

CONTRACT = ["control", "light", "shadows", "table_texture", "background", "distractors_1", "distractors_3",
            "camera_5deg", "camera_15deg", "depth_noise", "rgb_noise", "latency_1", "period_2", "test_hard"]


def test_the_registry_holds_the_contracts_factors_control_first() -> None:
    assert list(FACTORS) == CONTRACT
    assert factor_names("all") == CONTRACT
    assert factor_names("light,shadows") == ["control", "light", "shadows"]
    assert factor_names(["shadows", "control"]) == ["control", "shadows"]
    assert factor_names(None) == ["control"]


def test_unknown_and_repeated_factors_are_refused() -> None:
    with pytest.raises(ValueError, match=r"unknown factor 'fog'.*'control', 'light'.*'test_hard'"):
        factor_names("light,fog")
    with pytest.raises(ValueError, match="more than once"):
        factor_names(["light", "light"])


def test_parameters_are_recorded_as_plain_data() -> None:
    params = {name: f.parameters() for name, f in FACTORS.items()}
    json.dumps(params)  # JSON-friendly
    assert params["control"] == {}
    assert params["camera_15deg"] == {"camera_rotation_deg": 15.0}
    assert params["distractors_3"] == {"randomize": {"distractors": 3}}
    assert params["latency_1"] == {"latency": 1} and params["period_2"] == {"period": 2}
    assert params["test_hard"] == {"looks": "test-hard"}
    assert params["depth_noise"] == {"depth_noise": "d435"}
    assert params["light"]["randomize"]["light_elevation"] == [15.0, 80.0]
    assert FACTORS["camera_5deg"].camera_randomization.camera_rotation == pytest.approx(math.radians(5))


def test_a_factor_that_would_change_the_simulation_is_refused() -> None:
    with pytest.raises(ValueError, match="more than looks"):
        Factor("heavy", "masses", randomize=Randomization(mass_scale=(0.5, 2.0)))
    with pytest.raises(ValueError, match="sensor preset"):
        Factor("odd", "no such sensor", depth_noise="kinect")


def test_sensor_factors_change_the_cameras() -> None:
    rgb = Camera("a", width=64, height=48, fov=60.0, eye=(1, 0, 1), target=(0, 0, 0))
    depth = Camera("b", width=64, height=48, fov=60.0, eye=(1, 0, 1), target=(0, 0, 0), modalities=("rgb", "depth"))
    a, b = FACTORS["depth_noise"].cameras([rgb, depth])
    assert a == rgb and b.noise == preset_depth_noise("d435", depth)
    assert b.noise.depth_sigma[1] == pytest.approx(0.08 / (focal_length(depth) * 0.05))
    assert focal_length(depth) == pytest.approx(24 / math.tan(math.radians(30)))
    a, b = FACTORS["rgb_noise"].cameras([rgb, depth])
    assert a.noise.rgb_sigma == 6.0 and b.noise.rgb_sigma == 6.0
    assert [c.latency for c in FACTORS["latency_1"].cameras([rgb, depth])] == [1, 1]
    assert [c.period for c in FACTORS["period_2"].cameras([rgb, depth])] == [2, 2]
    assert FACTORS["light"].cameras([rgb]) == [rgb]

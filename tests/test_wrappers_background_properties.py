"""The background (pixelrig.wrappers.background.Background) on its own, without an env, aimed at what mutmut found no
test pinning (issue 33): what each source loads as, the episode's draw from the background's own stream (the episode
seed's SeedSequence spawned with the background's salt, never the env's), the clock (the reset's picture is step 0,
each later one a step more; a video loops from its drawn start), images stretched to each camera's size with OpenCV's
area averaging only when both sides shrink, made once per episode, frame and size and read-only, the video cap,
background_bodies by name or glob, snapshots of the state, and every refusal's message in full.
"""

from __future__ import annotations

import re
from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PIL import Image

from pixelrig import Camera
from pixelrig.render.procedural import FAMILIES, procedural_image
from pixelrig.wrappers import background as bg
from pixelrig.wrappers.background import Background, read_video

FEW = settings(max_examples=15, deadline=None)
CAMS = [Camera("a", width=20, height=10, eye=(1, 0, 1), target=(0, 0, 0)),
        Camera("b", width=6, height=14, eye=(0, 1, 1), target=(0, 0, 0))]


def salted(seed: int) -> np.random.Generator:
    """The background's stream of an episode seed: its SeedSequence spawned with key 0xBAC6 (gymnasium seeds the env
    with the plain seed)."""
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(0xBAC6,))))


def images(tmp_path: Path, n: int) -> list[np.ndarray]:
    out = []
    for i in range(n):
        image = procedural_image(FAMILIES[i % len(FAMILIES)], i, (12 + i, 16 + 2 * i))
        Image.fromarray(image).save(tmp_path / f"{i:02d}.png")
        out.append(image)
    return out


def write_video(path: Path, frames: int, size: tuple[int, int] = (8, 12)) -> np.ndarray:
    import imageio.v3 as iio

    video = np.zeros((frames, *size, 3), np.uint8)
    for i in range(frames):
        video[i, :, :, 0] = (37 * i) % 256  # every frame its own (a GIF merges equal neighbours)
        video[i, :, :, 1] = i // 256 * 20
    iio.imwrite(path, video)
    return video


# ---- the stream and the draw -------------------------------------------------------------------------------------


@FEW
@given(seed=st.integers(0, 2**63))
def test_an_episode_seed_gives_the_salted_stream_apart_from_the_envs(seed: int) -> None:
    background = Background("procedural", CAMS)
    background.seed(seed)
    assert background.rng.bit_generator.state == salted(seed).bit_generator.state
    assert background.rng.random() != np.random.default_rng(seed).random()


@FEW
@given(seed=st.integers(0, 2**32))
def test_a_procedural_background_draws_a_family_then_an_image_seed(seed: int) -> None:
    background = Background("procedural:stripes,marble,gradient", CAMS)
    background.seed(seed)
    background.start_episode()
    rng = salted(seed)
    family = ("stripes", "marble", "gradient")[int(rng.integers(3))]
    assert background.choice == [family, int(rng.integers(2**31))]
    image = background.image(1)
    np.testing.assert_array_equal(image, procedural_image(family, background.choice[1], (14, 6)))
    np.testing.assert_array_equal(background.image(0), procedural_image(family, background.choice[1], (10, 20)))
    assert background.families == ("stripes", "marble", "gradient") and background.describe == \
        "procedural:stripes,marble,gradient"


def test_a_single_family_and_every_family() -> None:
    assert Background("marble", CAMS).families == ("marble",)
    assert Background("procedural", CAMS).families == FAMILIES


def test_a_folder_draws_one_of_its_sorted_images_per_episode_stretched_to_each_camera(tmp_path: Path) -> None:
    made = images(tmp_path, 5)
    background = Background(tmp_path, CAMS)
    assert background.describe == str(tmp_path.resolve())
    assert background.files == tuple(str(tmp_path.resolve() / f"{i:02d}.png") for i in range(5))
    picks = set()
    for seed in range(12):
        background.seed(seed)
        background.start_episode()
        pick = int(salted(seed).integers(5))
        assert background.choice == [pick]
        picks.add(pick)
        for cam, (h, w) in enumerate([(10, 20), (14, 6)]):
            np.testing.assert_array_equal(background.image(cam), bg._resized(made[pick], h, w))
    assert len(picks) >= 4


def test_a_video_draws_its_start_frame_and_plays_a_frame_per_picture_looping(tmp_path: Path) -> None:
    video = write_video(tmp_path / "clip.gif", 7, (10, 20))
    background = Background(str(tmp_path / "clip.gif"), CAMS)
    np.testing.assert_array_equal(background.video, video)
    assert background.describe == str((tmp_path / "clip.gif").resolve())
    for seed in (0, 1, 2):
        background.seed(seed)
        background.start_episode()
        start = int(salted(seed).integers(7))
        assert background.choice == [start] and background.step == 0 and not background.shown
        for t in range(10):
            background.next_picture()
            assert background.step == t and background.shown
            np.testing.assert_array_equal(background.image(0), video[(start + t) % 7])  # camera a is 10 x 20
            np.testing.assert_array_equal(background.image(1), bg._resized(video[(start + t) % 7], 14, 6))


def test_an_image_is_always_itself_and_its_clock_only_counts(tmp_path: Path) -> None:
    image = procedural_image("checkers", 2, (10, 20))
    for source in (image, tmp_path / "one.png"):
        Image.fromarray(image).save(tmp_path / "one.png")
        background = Background(source, CAMS)
        assert background.describe == ("image" if source is image else str((tmp_path / "one.png").resolve()))
        background.seed(3)
        state = background.rng.bit_generator.state
        background.start_episode()
        assert background.choice == [0] and background.rng.bit_generator.state == state  # draws nothing
        np.testing.assert_array_equal(background.image(0), image)
        np.testing.assert_array_equal(background.image(1), bg._resized(image, 14, 6))


def test_a_new_background_has_drawn_nothing_and_its_clock_is_at_zero(tmp_path: Path) -> None:
    background = Background("noise", CAMS)
    state = background.state()
    assert state["choice"] == [] and state["step"] == 0 and state["shown"] is False
    background.next_picture()
    assert background.step == 0 and background.shown is True
    write_video(tmp_path / "clip.gif", 2)
    video = Background(tmp_path / "clip.gif", CAMS)
    assert (video.families, video.files, video.images) == ((), (), [])
    image = Background(procedural_image("noise", 0, (3, 3)), CAMS)
    assert (image.families, image.files, image.video) == ((), (), None)
    family = Background("marble", CAMS)
    assert (family.files, family.images, family.video) == ((), [], None)


def test_the_first_image_starts_an_episode_when_none_was() -> None:
    background = Background("noise", CAMS)
    background.seed(4)
    image = background.image(0)  # no start_episode yet: it draws one
    rng = salted(4)
    family = ("noise",)[int(rng.integers(1))]
    assert background.choice == [family, int(rng.integers(2**31))]
    np.testing.assert_array_equal(image, procedural_image("noise", background.choice[1], (10, 20)))


def test_the_clock_the_reset_shows_step_0_and_each_later_picture_a_step_more() -> None:
    background = Background("noise", CAMS)
    background.start_episode()
    assert (background.step, background.shown) == (0, False)
    steps = []
    for _ in range(4):
        background.next_picture()
        steps.append(background.step)
    assert steps == [0, 1, 2, 3] and background.shown
    background.start_episode()
    assert (background.step, background.shown) == (0, False)


# ---- images: sizes, caching, read-only ----------------------------------------------------------------------------


@FEW
@given(h=st.integers(1, 30), w=st.integers(1, 30), height=st.integers(1, 30), width=st.integers(1, 30),
       seed=st.integers(0, 100))
def test_resizing_averages_areas_when_both_sides_shrink_else_interpolates(h: int, w: int, height: int, width: int,
                                                                          seed: int) -> None:
    image = procedural_image("noise", seed, (h, w))
    got = bg._resized(image, height, width)
    assert got.shape == (height, width, 3)
    if (h, w) == (height, width):
        assert got is image
        return
    shrink = h > height and w > width
    expected = cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_LINEAR)
    np.testing.assert_array_equal(got, expected)


def test_area_and_linear_resizing_differ_where_it_is_chosen() -> None:
    """A case each way where the other interpolation would give other pixels (so the choice is seen)."""
    image = procedural_image("checkers", 1, (30, 40))
    shrunk = bg._resized(image, 9, 13)
    assert not np.array_equal(shrunk, cv2.resize(image, (13, 9), interpolation=cv2.INTER_LINEAR))
    mixed = bg._resized(image, 9, 50)  # one side grows: bilinear
    assert not np.array_equal(mixed, cv2.resize(image, (50, 9), interpolation=cv2.INTER_AREA))
    np.testing.assert_array_equal(mixed, cv2.resize(image, (50, 9), interpolation=cv2.INTER_LINEAR))


def test_images_are_read_only_and_made_once_per_episode_frame_and_size(tmp_path: Path) -> None:
    write_video(tmp_path / "clip.gif", 5)
    background = Background(str(tmp_path / "clip.gif"), CAMS)
    background.seed(0)
    background.start_episode()
    background.next_picture()
    first = background.image(0)
    assert not first.flags.writeable
    with pytest.raises(ValueError):
        first[0, 0, 0] = 1
    assert background.image(0) is first  # made once
    assert background.image(1) is not first and background.image(1).shape == (14, 6, 3)
    background.next_picture()
    second = background.image(0)
    assert second is not first and not np.array_equal(second, first)
    assert len(background._made) == 3


def test_the_cache_keeps_at_most_four_images_a_camera() -> None:
    background = Background("procedural", CAMS)  # two cameras: at most 8 kept
    made = []
    for seed in range(4):
        background.seed(seed)
        background.start_episode()
        made += [background.image(0), background.image(1)]
        assert len(background._made) == 2 * (seed + 1)
    background.seed(4)
    background.start_episode()
    newest = background.image(0)
    assert len(background._made) == 1  # full: cleared before the ninth
    assert background.image(0) is newest
    background.seed(0)
    background.start_episode()
    again = background.image(0)
    assert again is not made[0]
    np.testing.assert_array_equal(again, made[0])


# ---- videos ------------------------------------------------------------------------------------------------------


def test_a_video_is_cut_at_its_first_max_video_frames(tmp_path: Path) -> None:
    video = write_video(tmp_path / "long.gif", bg.MAX_VIDEO_FRAMES + 2, (2, 2))
    frames = read_video(tmp_path / "long.gif")
    assert frames.shape == (bg.MAX_VIDEO_FRAMES, 2, 2, 3) and frames.dtype == np.uint8
    np.testing.assert_array_equal(frames, video[:bg.MAX_VIDEO_FRAMES])
    assert bg.MAX_VIDEO_FRAMES == 3000  # "its first 3000" (the docstring's number)


def test_a_short_video_is_read_whole(tmp_path: Path) -> None:
    video = write_video(tmp_path / "short.gif", 3)
    np.testing.assert_array_equal(read_video(tmp_path / "short.gif"), video)


def test_an_unreadable_video_is_refused_naming_it_the_error_and_the_fix(tmp_path: Path) -> None:
    import imageio.v3 as iio

    path = tmp_path / "broken.gif"
    path.write_bytes(b"GIF89a not really")
    try:  # what imageio itself raises on it
        list(iio.imiter(path))
    except Exception as exc:  # noqa: BLE001 (whatever it is, the message names it)
        cause = f"{type(exc).__name__}: {exc}"
    with pytest.raises(ValueError, match="^" + re.escape(
            f"PixelObs: cannot read the video {str(path)!r} ({cause}): give a video imageio reads (mp4 needs "
            "imageio-ffmpeg), an image, a folder of images or 'procedural'") + "$"):
        read_video(path)


def test_a_video_frame_no_texture_can_hold_is_refused_naming_the_video(tmp_path: Path) -> None:
    import imageio.v3 as iio

    path = tmp_path / "wide.gif"
    iio.imwrite(path, np.zeros((1, 1, 4097, 3), np.uint8))
    with pytest.raises(ValueError, match="^" + re.escape(
            f"PixelObs: cannot read the video {str(path)!r} (ValueError: video {path}: image sides (1, 4097) must be "
            "within 1..4096 pixels): give a video imageio reads")):
        read_video(path)


def test_a_video_of_no_frames_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import imageio.v3 as iio

    monkeypatch.setattr(iio, "imiter", lambda path: iter(()))  # imageio itself refuses to write an empty video
    with pytest.raises(ValueError, match="^" + re.escape(f"PixelObs: the video {str(tmp_path / 'x.gif')!r} has no "
                                                         "frames: give another video, an image, a folder of images "
                                                         "or 'procedural'") + "$"):
        read_video(tmp_path / "x.gif")


# ---- bodies ------------------------------------------------------------------------------------------------------


def test_background_bodies_by_name_or_glob() -> None:
    names = {0: "ground", 1: "table", 2: "table_leg", 3: "panda", 5: "cube"}
    background = Background("noise", CAMS, ("ground", "table*", "robot*"))
    assert background.bodies == ("ground", "table*", "robot*")
    assert background.body_ids(names, first=True) == frozenset({0, 1, 2})
    assert Background("noise", CAMS, ("cube",)).body_ids(names, first=True) == frozenset({5})
    assert Background("noise", CAMS).body_ids(names, first=True) == frozenset()
    for pattern in ("robot?", "[xy]arm"):  # wildcards may match nothing
        assert Background("noise", CAMS, (pattern,)).body_ids(names, first=True) == frozenset()
    missing = Background("noise", CAMS, ("ground", "grund"))
    assert missing.body_ids(names, first=False) == frozenset({0})  # later bindings: a scene may lack it
    with pytest.raises(ValueError, match="^" + re.escape("PixelObs: background_bodies names 'grund', which is no body "
                                                         "here; bodies: ['cube', 'ground', 'panda', 'table', "
                                                         "'table_leg']") + "$"):
        missing.body_ids(names, first=True)
    with pytest.raises(ValueError, match=re.escape("background_bodies names 'X', which is no body here")):
        Background("noise", CAMS, ("X",)).body_ids(names, first=True)  # no wildcard in it


@pytest.mark.parametrize("bodies", ["ground", ("ground", ""), ("ground", 3), [None]])
def test_bad_background_bodies_are_refused(bodies) -> None:
    with pytest.raises(ValueError, match="^" + re.escape(f"PixelObs: background_bodies={bodies!r} must be a tuple of "
                                                         "body names (globs allowed), e.g. ('ground',)") + "$"):
        Background("noise", CAMS, bodies)


# ---- sources refused ---------------------------------------------------------------------------------------------


def test_bad_sources_are_refused_naming_the_fix(tmp_path: Path) -> None:
    def refused(source, message: str) -> None:
        with pytest.raises(ValueError, match="^" + re.escape(message) + "$"):
            Background(source, CAMS)

    families = f"'procedural' / one of {FAMILIES}"
    refused(3, f"PixelObs: background=3 must be an image array, the path of an image, a folder of images or a "
               f"video, or {families}")
    refused(str(tmp_path / "clouds"), f"PixelObs: background={str(tmp_path / 'clouds')!r} is neither a folder, an "
                                      "image (.png, .jpg, .jpeg, .bmp), a video (.mp4, .avi, .mov, .mkv, .webm, "
                                      f".gif) nor {families}")
    refused(tmp_path / "gone.mp4", f"PixelObs: background video {str(tmp_path / 'gone.mp4')!r} does not exist")
    refused(tmp_path, f"PixelObs: background={str(tmp_path)!r} holds no .png/.jpg/.jpeg/.bmp files: put images "
                      "there, or give an image, a video or 'procedural'")
    refused("procedural:noise,wood", "PixelObs: background='procedural:noise,wood' is neither a folder, an image "
                                     "(.png, .jpg, .jpeg, .bmp), a video (.mp4, .avi, .mov, .mkv, .webm, .gif) nor "
                                     f"{families}")
    with pytest.raises(ValueError, match="^" + re.escape("PixelObs(background=...): an image must be a uint8 array")):
        Background(np.zeros((4, 4, 3)), CAMS)


def test_suffixes_are_matched_whatever_their_case(tmp_path: Path) -> None:
    image = procedural_image("stripes", 1, (10, 20))
    Image.fromarray(image).save(tmp_path / "UP.PNG", format="png")
    np.testing.assert_array_equal(Background(tmp_path / "UP.PNG", CAMS).image(0), image)
    write_video(tmp_path / "CLIP.GIF", 2)
    assert Background(tmp_path / "CLIP.GIF", CAMS).video.shape == (2, 8, 12, 3)


# ---- snapshots ---------------------------------------------------------------------------------------------------


def test_the_state_round_trips_the_stream_the_draw_and_the_clock(tmp_path: Path) -> None:
    write_video(tmp_path / "clip.gif", 6)
    a, b = Background(str(tmp_path / "clip.gif"), CAMS), Background(str(tmp_path / "clip.gif"), CAMS)
    a.seed(9)
    a.start_episode()
    for _ in range(3):
        a.next_picture()
    state = a.state()
    assert state == {"rng": a.rng.bit_generator.state, "choice": a.choice, "step": 2, "shown": True}
    assert state["choice"] is not a.choice
    b.set_state(state)
    assert (b.choice, b.step, b.shown) == (a.choice, 2, True)
    np.testing.assert_array_equal(b.image(0), a.image(0))
    a.start_episode()
    b.start_episode()
    assert a.choice == b.choice and a.rng.random() == b.rng.random()
    b.set_state({**state, "shown": False})
    assert b.shown is False


@pytest.mark.parametrize("state", [None, {}, {"rng": {}, "choice": [], "step": 0}, {"rng": 1, "choice": [], "step": 0,
                                                                                     "shown": True},
                                   {"rng": {}, "choice": 3, "step": 0, "shown": True},
                                   {"rng": {}, "choice": [], "step": "x", "shown": True}])
def test_a_state_that_is_no_backgrounds_is_refused_and_changes_nothing(state) -> None:
    background = Background("noise", CAMS)
    background.seed(1)
    background.start_episode()
    before = background.state()
    with pytest.raises(ValueError, match="^" + re.escape("PixelObs: the snapshot's background state is not a "
                                                         "background's (rng, choice, step)") + "$"):
        background.set_state(state)
    assert background.state() == before

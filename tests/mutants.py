"""The mutation smoke: named mutants of pixelrig, each with the tests that must kill it.

Each mutant breaks one feature the README claims, in a temporary copy of the tree, and runs the tests named for
it against that copy (``PYTHONPATH`` puts the copy's ``pixelrig`` before the installed one, for child processes
too). A mutant is killed when every test named for it fails (a parametrised test: at least one of its cases); it
survives otherwise, and the smoke then fails. A mutant whose edit no longer applies to the code also fails
the smoke: update the edit together with the code it breaks. A broken copy (a syntax error, a collection error)
is not a kill.

    python -m tests.mutants                # every mutant (CI's long stage: make test-mutants)
    python -m tests.mutants --list         # names, what each breaks, the tests that kill it
    python -m tests.mutants normals-up     # some, by name
    python -m tests.mutants --baseline     # the named tests on the tree as it is: they must pass
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from pixelrig.system.cache import cache_root

ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` (which must occur exactly once) by ``new`` in ``path`` (relative to the repository root)."""

    path: str
    old: str
    new: str


@dataclass(frozen=True)
class Mutant:
    """A named break of one feature and the tests (pytest node ids) that must fail on it.

    Attributes:
        name: short id used on the command line.
        breaks: what the mutant breaks, in a sentence.
        tests: pytest node ids run against the mutated copy; each must fail (one case of a parametrised test).
        edits: source edits; empty for a mutant of the machine (``env`` only).
        env: environment variables set for the test run (a machine mutant: a missing EGL vendor file).
    """

    name: str
    breaks: str
    tests: tuple[str, ...]
    edits: tuple[Edit, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


NO_EGL = {"PIXELRIG_REQUIRE_EGL": "1", "__EGL_VENDOR_LIBRARY_FILENAMES": "/nonexistent/egl_vendor.json"}
"""A machine without an EGL vendor file (libglvnd finds no driver), where CI requires EGL."""

MUTANTS: tuple[Mutant, ...] = (
    Mutant("gl-tests-skip-without-egl", "no EGL vendor file while CI requires EGL: gl tests must fail, not skip",
           ("tests/test_render_gl.py::test_gl_is_registered_and_envs_take_it",), env=NO_EGL),
    Mutant("batched-tests-skip-without-egl", "no EGL vendor file while CI requires EGL: batched tests must fail",
           ("tests/test_vector_batched.py::test_first_observations_equal_lone_gl_envs_seeded_seed_plus_i",),
           env=NO_EGL),
    Mutant("normals-up", "every normal is (0, 0, 1), estimated (tiny, egl) or drawn (gl)",
           ("tests/test_cameras_points.py::test_normals_of_a_tilted_box_and_an_upright_one_are_their_faces",),
           edits=(Edit("pixelrig/cameras/rig.py",
                       'out[f"{name}/normal"] = normals_from_points(points, metres, centre, frame.seg)',
                       'out[f"{name}/normal"] = np.float32([0, 0, 1]) * (frame.zbuffer[..., None] < 1.0)'),
                  Edit("pixelrig/cameras/rig.py",
                       'out[f"{name}/normal"] = np.clip(frame.normal, -1.0, 1.0)',
                       'out[f"{name}/normal"] = np.float32([0, 0, 1]) * (frame.zbuffer[..., None] < 1.0)'))),
    Mutant("joint-state-garbage", "q and qd read as 3e38 (finite float32, inside an infinite Box)",
           ("tests/test_envs_observation_bounds.py::test_robot_files_that_left_their_space_stay_in_it",
            "tests/test_envs_observation_bounds.py::test_bundled_ids_stay_in_their_space_under_bang_bang"),
           edits=(Edit("pixelrig/envs/terms.py", "value: Any = [s[0] for s in joint_states()]",
                       "value: Any = [3e38 for s in joint_states()]"),
                  Edit("pixelrig/envs/terms.py", "value = [s[1] for s in joint_states()]",
                       "value = [3e38 for s in joint_states()]"),
                  Edit("pixelrig/envs/base.py", "np.array([s[0] for s in states], dtype=np.float64),",
                       "np.array([3e38 for s in states], dtype=np.float64),"),
                  Edit("pixelrig/envs/base.py", "np.array([s[1] for s in states], dtype=np.float64),",
                       "np.array([3e38 for s in states], dtype=np.float64),"))),
    Mutant("wheel-script-reinstalls", "scripts/pybullet-wheel.sh reinstalls pybullet into a venv whose build is good",
           ("tests/test_python_versions.py::test_pybullet_wheel_script_leaves_a_good_install_alone",),
           edits=(Edit("scripts/pybullet-wheel.sh", "if numpy_ok; then\n  exit 0\nfi",
                       "if false; then\n  exit 0\nfi"),)),
    Mutant("batched-gl-unbatched", "batched gl envs each drawn alone (a GL pass per env, not per part)",
           ("tests/test_vector_batched.py::test_a_step_draws_each_part_of_the_envs_in_one_gl_pass",),
           edits=(Edit("pixelrig/render/backends.py", "        if type(backend).batches:",
                       "        if False:"),)),
    Mutant("gl-bodies-3cm-far", "gl draws every body but the ground and the table 3 cm further from the camera",
           ("tests/test_render_gl.py::test_matches_tiny_renderer",),
           edits=(Edit("pixelrig/render/gl/pipeline.py", "z = _zbuffer(lin[rows, cols][::-1], r.projection)",
                       "s = seg_all[rows, cols][::-1]\n"
                       "            z = _zbuffer(lin[rows, cols][::-1] + 0.03 * (((s & 0xFFFFFF) >= 2) & (s >= 0)), "
                       "r.projection)"),)),
    Mutant("recorded-rewards-zero", "the dataset recorder stores every reward as 0.0",
           ("tests/test_datasets_robomimic.py::test_robomimic_layout",
            "tests/test_datasets_lerobot.py::test_lerobot_layout"),
           edits=(Edit("pixelrig/datasets/recorder.py", "Step(self._obs, stored_action, float(reward), ",
                       "Step(self._obs, stored_action, 0.0, "),)),
    Mutant("lerobot-video-frozen", "LeRobot videos repeat each episode's first frame",
           ("tests/test_datasets_lerobot.py::test_lerobot_layout",),
           edits=(Edit("pixelrig/datasets/lerobot.py",
                       "_each(lambda cam: ep.videos[cam].write(frame.obs.rgb[cam]), list(ep.videos))",
                       "ep.first = dict(frame.obs.rgb); "
                       "_each(lambda cam: ep.videos[cam].write(ep.first[cam]), list(ep.videos))"),
                  Edit("pixelrig/datasets/lerobot.py", "stream.write(frame.obs.rgb[cam])",
                       "stream.write(ep.first[cam])"))),
    Mutant("lerobot-stats-zero", "every statistic in LeRobot's meta/stats.json is 0 (counts kept)",
           ("tests/test_datasets_lerobot.py::test_lerobot_layout",),
           edits=(Edit("pixelrig/datasets/stats.py", "out[key][name] = arr.tolist()",
                       'out[key][name] = (arr * (name == "count")).tolist()'),)),
    Mutant("video-frozen", "VideoRecorder writes the reset frame for the whole episode",
           ("tests/test_wrappers_video_recorder.py::test_one_mp4_per_episode_reads_back",
            "tests/test_tools_demo.py::test_demo_writes_sheet_and_video"),
           edits=(Edit("pixelrig/wrappers/video_recorder.py",
                       "            self._stream.write(self.frame_source.frame(obs))",
                       "            self._frozen = self.frame_source.frame(obs)\n"
                       "            self._stream.write(self._frozen)"),
                  Edit("pixelrig/wrappers/video_recorder.py",
                       "            self._stream.write(self.frame_source.frame(result[0]))",
                       "            self._stream.write(self._frozen)"))),
    Mutant("web-depth-shows-rgb", "the browser page's depth view shows the RGB image",
           ("tests/test_wrappers_browser_view.py::test_compose_views",
            "tests/test_wrappers_browser_view.py::test_chromium_shows_the_rig_and_follows_the_run"),
           edits=(Edit("pixelrig/display/web.py",
                       "        return colorize_depth(img, background=near_far[1]) if near_far and near_far[1] > 0 "
                       "else colorize_depth(img)",
                       '        return np.ascontiguousarray(frames[f"{camera}/rgb"][env][..., :3], dtype=np.uint8)'),)),
    Mutant("mosaic-depth-shows-rgb", "the tiled rig's depth pane shows the RGB image (window, sheet, video, gif)",
           ("tests/test_display_window.py::test_human_window_shows_the_tiled_rig",
            "tests/test_wrappers_video_recorder.py::test_gif_of_the_tiled_rig"),
           edits=(Edit("pixelrig/display/mosaic.py",
                       "                tile = colorize_depth(img, background=near_far[1]) if near_far else "
                       "colorize_depth(img)",
                       '                tile = np.asarray(frames[f"{name}/rgb"], np.uint8)'),)),
    Mutant("ik-undamped", "the differential IK solves J Jᵀ without damping (λ = 0): singular poses blow it up",
           ("tests/test_envs_control.py::test_singular_pose_is_solved_without_blowing_up",
            "tests/test_envs_control.py::test_damped_step_is_bounded_where_the_jacobian_loses_rank"),
           edits=(Edit("pixelrig/control/task_space.py", "    gram.flat[:: len(gram) + 1] += damping * damping",
                       "    gram.flat[:: len(gram) + 1] += 0.0"),)),
    Mutant("ik-position-rows-only", "the Jacobian's rotational rows are dropped: orientation is not controlled",
           ("tests/test_envs_control.py::test_small_deltas_land_on_their_targets",
            "tests/test_envs_control.py::test_absolute_poses_are_reached"),
           edits=(Edit("pixelrig/control/task_space.py", "jac = np.array((*lin, *ang))[:, chain.columns]",
                       "jac = np.array((*lin, *np.zeros_like(ang)))[:, chain.columns]"),)),
    Mutant("ik-deltas-from-measured-pose", "deltas move the measured pose, not the last target",
           ("tests/test_envs_control.py::test_small_deltas_land_on_their_targets",),
           edits=(Edit("pixelrig/control/task_space.py",
                       "new = delta_target(target, action[:3] * s.max_delta_pos, drot, s.ee_frame)",
                       "new = delta_target(np.concatenate([now.pos, now.quat]), action[:3] * s.max_delta_pos, drot, "
                       "s.ee_frame)"),)),
    Mutant("ik-target-winds-up", "a delta target is no longer held near the measured pose: a blocked arm winds up",
           ("tests/test_envs_control.py::test_a_blocked_arm_does_not_wind_up",),
           edits=(Edit("pixelrig/control/task_space.py",
                       "        new[:3] = np.clip(new[:3], self.low, self.high)\n"
                       "        return hold_near(new, now.pos, now.quat, s.target_lead * s.max_delta_pos, "
                       "s.target_lead * s.max_delta_rot)",
                       "        new[:3] = np.clip(new[:3], self.low, self.high)\n        return new"),)),
    Mutant("ik-ee-frame-ignored", "ee_frame='ee' deltas are applied in world axes",
           ("tests/test_envs_control.py::test_ee_frame_deltas_move_along_the_end_effectors_axes",),
           edits=(Edit("pixelrig/control/task_space.py", '    if frame == "ee":', "    if False:"),)),
    Mutant("ik-no-velocity-cap", "joint steps are not scaled to the velocity limits",
           ("tests/test_envs_control.py::test_bang_bang_stays_finite_in_its_space_and_in_the_joint_limits",),
           edits=(Edit("pixelrig/control/task_space.py", "self.max_step = chain.speed * dt",
                       "self.max_step = chain.speed * np.inf"),)),
    Mutant("gripper-force-near-zero", "the gripper's fingers push with 0.3 N: a grasped cube drops",
           ("tests/test_envs_control.py::test_a_grasped_cube_holds_through_a_shake",
            "tests/test_envs_control.py::test_gripper_terms_read_its_opening_and_its_contacts"),
           edits=(Edit("pixelrig/envs/panda.py", "GRIPPER_FORCE = 20.0", "GRIPPER_FORCE = 0.3"),
                  Edit("pixelrig/envs/joints.py",
                       "limit = force if force is not None else float(info[10])",
                       "limit = 0.3"))),
    Mutant("gripper-uncoupled", "the fingers are not geared together: a grasped cube slides between them",
           ("tests/test_envs_control.py::test_a_grasped_cube_holds_through_a_shake",),
           edits=(Edit("pixelrig/control/gripper.py",
                       "for j, lo, hi in zip(joints[1:], lower[1:], upper[1:], strict=True):",
                       "for j, lo, hi in []:"),)),
    Mutant("view-ignores-cams", "pixelrig view ignores --cams and shows the env's default rig",
           ("tests/test_tools_cli.py::test_view_an_env_id_with_a_rig_file",),
           edits=(Edit("pixelrig/tools/view.py",
                       "        env = HumanWindow(PixelObs(env, cams=load_rig(cams)), fps=fps, scale=scale, "
                       "title=title)",
                       "        env = HumanWindow(PixelObs(env), fps=fps, scale=scale, title=title)"),)),
    Mutant("same-step-final-drawn-after-reset", "same-step autoreset draws the ended episode's final obs after reset",
           ("tests/test_vector_autoreset.py::test_every_mode_matches_gymnasiums_sync_vector_env",),
           edits=(Edit("pixelrig/vector/batched.py",
                       "                        finals[i] = (self._drawn_alone(i, inner[i]), infos[i])  # before the "
                       "reset changes the scene\n"
                       "                        inner[i], infos[i] = _reset_unrendered(env, None, None)",
                       "                        reset = _reset_unrendered(env, None, None)\n"
                       "                        finals[i] = (self._drawn_alone(i, inner[i]), infos[i])\n"
                       "                        inner[i], infos[i] = reset"),)),
    Mutant("vector-final-info-is-the-resets", "same-step autoreset reports the new episode's reset info as the ended "
           "episode's final_info (an ended Panda episode gets the next one's is_success)",
           ("tests/test_vector_autoreset_infos.py::test_every_mode_gives_gymnasiums_infos_on_a_panda_task",
            "tests/test_vector_autoreset_properties.py::test_bookkeeping_follows_gymnasiums_semantics"),
           edits=(Edit("pixelrig/vector/batched.py", '{"final_obs": final[0], "final_info": final[1]}',
                       '{"final_obs": final[0], "final_info": info}'),)),
    Mutant("sb3-final-info-is-the-resets", "SB3's VecEnv hands SB3 the new episode's reset info for the ended one "
           "(its is_success and distance are the next episode's)",
           ("tests/test_integrations_sb3_infos.py::test_equals_dummy_vec_env_on_a_panda_task",),
           edits=(Edit("pixelrig/integrations/sb3.py", 'step_info = dict(info.get("final_info", {}))',
                       'step_info = {k: v for k, v in info.items() if k not in ("final_obs", "final_info")}'),)),
    Mutant("autoreset-ignores-truncation", "an episode truncated (not terminated) is not autoreset next step",
           ("tests/test_vector_autoreset_properties.py::test_bookkeeping_follows_gymnasiums_semantics",),
           edits=(Edit("pixelrig/vector/batched.py",
                       "self.autoreset[i] = bool(terminated[i] or truncated[i]) and",
                       "self.autoreset[i] = bool(terminated[i]) and"),)),
    Mutant("reset-mask-keeps-autoreset-flag", "reset(options={'reset_mask': m}) leaves a reset env marked to autoreset",
           ("tests/test_vector_autoreset_properties.py::test_bookkeeping_follows_gymnasiums_semantics",),
           edits=(Edit("pixelrig/vector/batched.py", "                self.autoreset[i] = False\n",
                       "                pass\n"),)),
    Mutant("tiny-background-not-far", "TinyRenderer's cleared z-buffer (0.99999994 at far = 6) is taken as a surface",
           ("tests/test_cameras_sensors.py::test_background_reads_far_and_has_no_points",),
           edits=(Edit("pixelrig/render/backends.py",
                       "        return background_to_one(z, float(tiny_background_zbuffer(projection)))",
                       "        return z"),)),
    Mutant("intrinsics-sampling-ignored", "an intrinsics camera's frustum assumes TinyRenderer's pixel sampling on "
           "every renderer: its principal point is half a pixel off on EGL",
           ("tests/test_cameras_sensors.py::test_intrinsics_are_exact_on_every_renderer",),
           edits=(Edit("pixelrig/cameras/lens.py", "    dx, dy = sampling", "    dx, dy = (0.0, -1.0)"),)),
    Mutant("intrinsics-principal-point-centred", "an intrinsics camera is drawn with a symmetric frustum (cx, cy "
           "ignored)",
           ("tests/test_cameras_sensors.py::test_intrinsics_are_exact_on_every_renderer",),
           edits=(Edit("pixelrig/cameras/lens.py", "    m[0, 2] = 1.0 - 2.0 * (cx - dx) / width",
                       "    m[0, 2] = 0.0"),
                  Edit("pixelrig/cameras/lens.py", "    m[1, 2] = 2.0 * (cy - dy) / height - 1.0",
                       "    m[1, 2] = 0.0"))),
    Mutant("distortion-maps-skipped", "a distorted camera shows the pinhole image (its pixels' rays not undistorted)",
           ("tests/test_cameras_sensors.py::test_distorted_points_project_with_opencv_onto_their_pixels",),
           edits=(Edit("pixelrig/cameras/lens.py", "    rays = undistort_pixels(kk, distortion, width, height)",
                       "    rays = pinhole_rays(kk, width, height)"),)),
    Mutant("noise-from-env-rng", "sensor noise is drawn from the env's np_random",
           ("tests/test_wrappers_sensors.py::test_same_seed_same_noise_and_the_env_never_sees_it",
            "tests/test_wrappers_sensors.py::test_sensor_features_leave_the_simulation_and_other_cameras_alone"),
           edits=(Edit("pixelrig/wrappers/pixel_obs.py", "            frames = self.sensors.observe(frames)",
                       "            self.sensors.rng = self.env.unwrapped.np_random\n"
                       "            frames = self.sensors.observe(frames)"),)),
    Mutant("depth-noise-linear", "depth noise grows as a + b z, not a + b z**2",
           ("tests/test_wrappers_sensors.py::test_depth_noise_over_a_flat_plane_matches_its_model",),
           edits=(Edit("pixelrig/cameras/noise.py", "        return a + b * np.square(z)",
                       "        return a + b * np.asarray(z)"),)),
    Mutant("latency-off-by-one", "a camera with latency d shows the picture of d + 1 steps ago",
           ("tests/test_wrappers_sensors.py::test_period_and_latency_match_a_reference_drawn_every_step",),
           edits=(Edit("pixelrig/cameras/sensors.py",
                       "deque([picture] * (cam.latency + 1), maxlen=cam.latency + 1)",
                       "deque([picture] * (cam.latency + 2), maxlen=cam.latency + 2)"),)),
    Mutant("period-ignored", "every camera takes a picture at every step whatever its period",
           ("tests/test_wrappers_sensors.py::test_period_and_latency_match_a_reference_drawn_every_step",
            "tests/test_wrappers_sensors.py::test_only_the_cameras_due_are_drawn"),
           edits=(Edit("pixelrig/cameras/sensors.py",
                       "        return [i for i, cam in enumerate(self.cameras) if t % cam.period == 0]",
                       "        return list(range(len(self.cameras)))"),)),
    Mutant("noise-stream-not-restored", "restoring a snapshot leaves the noise generator where it was",
           ("tests/test_wrappers_sensors.py::test_a_snapshot_mid_delay_restores_the_pictures_and_the_noise_stream",),
           edits=(Edit("pixelrig/cameras/sensors.py", "        rng.bit_generator.state = dict(noise)",
                       "        rng = self.rng"),)),
    Mutant("stereo-without-dots", "the active stereo's projector is off: SGBM matches the bare grey images",
           ("tests/test_cameras_sensors.py::test_stereo_depth_is_close_to_exact_on_a_plane",),
           edits=(Edit("pixelrig/cameras/stereo.py",
                       "    return np.clip(np.rint(AMBIENT * grey + DOT_LEVELS * dots), 0, 255).astype(np.uint8)",
                       "    return np.clip(np.rint(AMBIENT * grey + 0.0 * dots), 0, 255).astype(np.uint8)"),)),
    # Issue 33: mutants that passed while every test's input was the one case where wrong and right code agree (k3 = 0,
    # square pixels, probability 0.5, depths far from the range's bounds, the env's seed).
    Mutant("lens-k3-ignored", "k3 is ignored when undistorting: rays land 0.47 px off with k3 = 0.03 (96x72)",
           ("tests/test_cameras_sensors_properties.py::test_undistorted_rays_redistort_onto_their_pixels_with_opencv",
            "tests/test_cameras_sensors_properties.py::test_a_distorted_plane_reads_its_analytic_depth"),
           edits=(Edit("pixelrig/cameras/lens.py",
                       "    dist = np.asarray(distortion, dtype=np.float64)\n    cols, rows = np.meshgrid",
                       "    dist = np.asarray(tuple(distortion)[:4] + (0.0,), dtype=np.float64)\n"
                       "    cols, rows = np.meshgrid"),)),
    Mutant("stereo-fx-read-as-fy", "stereo depth uses fy for fx: a wall at 1 m reads 0.8 m with fy = 0.8 fx",
           ("tests/test_cameras_sensors_properties.py::test_stereo_with_non_square_off_centre_pixels_reads_the_wall_at_its_depth",),
           edits=(Edit("pixelrig/cameras/rig.py", "        fx = float(k[0, 0])\n        width, height = lens.draw_size",
                       "        fx = float(k[1, 1])\n        width, height = lens.draw_size"),)),
    Mutant("noise-range-on-exact-depth", "the valid range is judged on the exact depth, not the noisy reading: a "
           "reading just outside the range is kept (and one just inside dropped)",
           ("tests/test_cameras_sensors_properties.py::test_depth_near_the_range_bounds_is_the_documented_draw",),
           edits=(Edit("pixelrig/cameras/noise.py", "        invalid |= hit & ((z < lo) | (z > hi))",
                       "        invalid |= hit & ((exact < lo) | (exact > hi))"),)),
    Mutant("noise-range-open", "readings exactly at the range's bounds read invalid (the documented range is closed)",
           ("tests/test_cameras_sensors_properties.py::test_depth_near_the_range_bounds_is_the_documented_draw",),
           edits=(Edit("pixelrig/cameras/noise.py", "        invalid |= hit & ((z < lo) | (z > hi))",
                       "        invalid |= hit & ((z <= lo) | (z >= hi))"),)),
    Mutant("grazing-dropout-complement", "grazing pixels drop with probability 1 - p (the same at p = 0.5)",
           ("tests/test_cameras_sensors_properties.py::test_dropouts_are_the_documented_draws_at_asymmetric_probabilities",),
           edits=(Edit("pixelrig/cameras/noise.py", "invalid |= grazing & (draw < noise.grazing_dropout)",
                       "invalid |= grazing & (draw >= noise.grazing_dropout)"),)),
    Mutant("lens-opencv-default-iterations", "the distortion is undone with OpenCV's default criteria (5 "
           "iterations): a strong lens is left ~0.1 px off, refused, though 30 iterations and Newton invert it",
           ("tests/test_cameras_lens_properties.py::test_a_lens_opencvs_default_iterations_leave_far_off_is_inverted_and_accepted",),
           edits=(Edit("pixelrig/cameras/lens.py", "    norm = cv2.undistortPoints(pix, k, dist, criteria=criteria)",
                       "    norm = cv2.undistortPoints(pix, k, dist)"),)),
    Mutant("depth-planar-tol-over-mean", "the planar test's tolerance is divided by the taps' mean inverse depth: "
           "16x too strict at 0.25 m, 16x too loose at 4 m",
           ("tests/test_cameras_lens_properties.py::test_the_planar_tolerance_scales_with_each_pixels_mean_inverse_depth",),
           edits=(Edit("pixelrig/cameras/lens.py", "<= PLANAR_TOL * inv.mean(axis=0)",
                       "<= PLANAR_TOL / inv.mean(axis=0)"),)),
    Mutant("fov-full-angle", "a field-of-view camera's focal length from tan(fov), not tan(fov / 2): its K is not "
           "the frustum pybullet draws",
           ("tests/test_cameras_lens_properties.py::test_fov_intrinsics_are_the_frustum_pybullet_draws",),
           edits=(Edit("pixelrig/cameras/lens.py", "math.tan(math.radians(fov) / 2.0)",
                       "math.tan(math.radians(fov))"),)),
    Mutant("noise-nan-equal-by-identity", "a NaN invalid is compared as a float: a pickled noise (a rig sent to a "
           "vector env's subprocess) holds a new NaN object and no longer equals or hashes like the original",
           ("tests/test_cameras_noise_properties.py::test_a_pickled_nan_noise_equals_and_hashes_like_the_original",),
           edits=(Edit("pixelrig/cameras/noise.py",
                       'tuple("nan" if f.name == "invalid" and math.isnan(self.invalid) else getattr(self, f.name)',
                       "tuple(getattr(self, f.name)"),)),
    Mutant("edge-threshold-in-float32", "edges of a float32 depth image are judged in float32: a threshold 2**-40 "
           "under the jump ratio rounds onto it and the jump is no longer an edge",
           ("tests/test_cameras_noise_properties.py::test_the_edge_threshold_is_applied_exactly_to_a_float32_depth_image",),
           edits=(Edit("pixelrig/cameras/noise.py", "np.asarray(depth, dtype=np.float64), np.inf)",
                       "np.asarray(depth), np.inf)"),)),
    Mutant("noise-range-max-at-far-open", "a depth range whose max is the far plane drops the background (which "
           "reads far, inside the closed range)",
           ("tests/test_cameras_noise_properties.py::test_a_range_ending_or_starting_at_far_keeps_or_drops_the_background_as_documented",),
           edits=(Edit("pixelrig/cameras/noise.py", "        if not lo <= far <= hi:",
                       "        if not lo <= far < hi:"),)),
    Mutant("noise-stream-is-the-envs", "the noise generator is seeded like the env's np_random: the same stream",
           ("tests/test_cameras_sensors_properties.py::test_timeline_noise_is_its_own_stream_drawn_when_a_picture_is_taken",),
           edits=(Edit("pixelrig/cameras/sensors.py", "np.random.SeedSequence(seed, spawn_key=(NOISE_SALT,))",
                       "np.random.SeedSequence(seed)"),)),
    Mutant("stereo-speckle-filter-off", "SGBM's speckle filter is off: blobs of up to 100 px of stray disparity "
           "read as depth (the documented window 100, range 2)",
           ("tests/test_cameras_stereo_properties.py::test_sgbm_depth_is_opencvs_sgbm_with_the_documented_settings_on_a_scene_where_each_matters",),
           edits=(Edit("pixelrig/cameras/stereo.py", "speckleWindowSize=100, speckleRange=2",
                       "speckleWindowSize=0, speckleRange=2"),)),
    Mutant("stereo-uniqueness-off", "SGBM keeps ambiguous matches (uniqueness ratio 0, not the documented 10)",
           ("tests/test_cameras_stereo_properties.py::test_sgbm_depth_is_opencvs_sgbm_with_the_documented_settings_on_a_scene_where_each_matters",),
           edits=(Edit("pixelrig/cameras/stereo.py", "uniquenessRatio=10,", "uniquenessRatio=0,"),)),
    Mutant("snapshot-without-held-pictures-accepted", "a snapshot between resets without the pictures of a camera "
           "with a period alone (or a latency alone) is accepted: the next observation fails on the missing history",
           ("tests/test_cameras_timeline_properties.py::test_a_snapshot_without_a_holding_cameras_pictures_is_refused_unless_at_a_reset",),
           edits=(Edit("pixelrig/cameras/sensors.py", "if (cam.period > 1 or cam.latency > 0)",
                       "if (cam.period > 1 and cam.latency > 0)"),)),
    Mutant("rllib-images-into-mlp", "RLlib's pixel encoder flattens the images into the MLP instead of a CNN per image",
           ("tests/test_integrations_rllib.py::test_the_default_module_has_a_cnn_per_image_key_and_an_mlp_for_the_rest",),
           edits=(Edit("pixelrig/integrations/rllib_model.py",
                       "    return isinstance(space, gym.spaces.Box) and len(space.shape) == 3",
                       "    return False"),)),
    Mutant("frame-stack-across-episodes", "FrameStack keeps the ended episode's frames after an autoreset",
           ("tests/test_vector_stack.py::test_equals_frame_stack_observation_in_each_env_through_autoresets",),
           edits=(Edit("pixelrig/vector/stack.py", "            if restart.any():", "            if False:"),)),
    Mutant("lift-threshold-halved", "PandaLift succeeds with the cube lifted 5 cm instead of 10",
           ("tests/test_envs_tasks_manipulation.py::test_lift_succeeds_with_the_cube_10_cm_up",),
           edits=(Edit("pixelrig/tasks/lift.py", "        return self.lifted() >= self.lift_height",
                       "        return self.lifted() >= 0.5 * self.lift_height"),)),
    Mutant("stack-release-ignored", "PandaStack succeeds with cube A on B while the gripper still holds it",
           ("tests/test_envs_tasks_manipulation.py::test_stack_is_not_done_while_the_gripper_holds_a",),
           edits=(Edit("pixelrig/envs/manipulation.py",
                       "        return self.on_b() and self.released() and self.still(\"cube_a\")",
                       "        return self.on_b() and self.still(\"cube_a\")"),)),
    Mutant("peg-beside-the-hole", "PandaPegInsert counts the peg's depth without checking it is in the hole",
           ("tests/test_envs_tasks_manipulation.py::test_peg_insert_succeeds_3_cm_down_inside_the_hole",),
           edits=(Edit("pixelrig/tasks/peg_insert.py", "        return inside and depth >= self.insert_depth",
                       "        return depth >= self.insert_depth"),)),
    Mutant("sparse-reward-never-negative", "the sparse reward is 0 on every step, success or not",
           ("tests/test_envs_tasks_manipulation.py::test_lift_succeeds_with_the_cube_10_cm_up",
            "tests/test_envs_tasks_manipulation.py::test_rewards_are_bounded_and_zero_exactly_on_success"),
           edits=(Edit("pixelrig/envs/manipulation.py",
                       "        if self.reward_type == \"sparse\":\n            return -1.0",
                       "        if self.reward_type == \"sparse\":\n            return 0.0"),)),
    Mutant("pick-object-always-the-first", "PandaPickObject loads the same object whatever the seed",
           ("tests/test_envs_tasks_manipulation.py::test_pick_object_chooses_the_object_by_seed",),
           edits=(Edit("pixelrig/tasks/pick_object.py",
                       "        self.object_index = int(self.np_random.integers(len(OBJECTS)))",
                       "        self.object_index = 0"),)),
    Mutant("world-state-not-restored", "restoring a snapshot rebuilds the world with the env's object, not the "
           "snapshot's",
           ("tests/test_envs_tasks_manipulation.py::test_snapshots_mid_grasp_restore_the_task_bit_exactly",),
           edits=(Edit("pixelrig/envs/state.py", "        for name in self.world_state:\n            setattr(",
                       "        for name in ():\n            setattr("),)),
    Mutant("expert-never-closes", "the experts never close the gripper (closing means opening)",
           ("tests/test_experts.py::test_experts_succeed_on_most_of_ten_seeds",),
           edits=(Edit("pixelrig/experts/base.py", "OPEN, CLOSED = 1.0, -1.0", "OPEN, CLOSED = 1.0, 1.0"),)),
    Mutant("gl-light-direction-ignored", "gl lights every look from TinyRenderer's default direction",
           ("tests/test_render_looks.py::test_the_lit_face_turns_with_the_light",
            "tests/test_render_looks.py::test_gl_matches_tiny_under_every_look"),
           edits=(Edit("pixelrig/render/gl/pipeline.py",
                       "    return (tuple(float(x) for x in lighting.unit_direction.astype(np.float32)),",
                       "    return (tuple(float(x) for x in DEFAULT_LIGHTING.unit_direction.astype(np.float32)),"),)),
    Mutant("gl-shadows-off", "gl draws no shadow map: shadows are never cast",
           ("tests/test_render_looks.py::test_the_cube_casts_its_shadow_where_the_light_says",
            "tests/test_render_looks.py::test_gl_matches_tiny_under_every_look"),
           edits=(Edit("pixelrig/render/gl/pipeline.py",
                       "        views = [_shadow_request(r, light) if light.shadows else None",
                       "        views = [_shadow_request(r, light) if False else None"),)),
    Mutant("textures-not-applied", "a texture is loaded and recorded but never put on the link",
           ("tests/test_render_looks.py::test_textures_set_at_run_time_show_on_tiny_and_gl",
            "tests/test_envs_looks.py::test_set_texture_is_visual_only_recorded_and_gone_at_reset"),
           edits=(Edit("pixelrig/render/textures.py",
                       "    p.changeVisualShape(body, link, textureUniqueId=tex, rgbaColor=",
                       "    p.changeVisualShape(body, link, rgbaColor="),
                  Edit("pixelrig/render/gl/pipeline.py", "            image = worn.get((inst.body, inst.link))",
                       "            image = None"))),
    Mutant("background-fills-labelled-pixels", "the background covers the bodies too, not only label -1",
           ("tests/test_wrappers_background.py::test_background_fills_the_background_pixels_only",
            "tests/test_wrappers_background.py::test_background_bodies_are_filled_too_and_only_their_pixels"),
           edits=(Edit("pixelrig/cameras/rig.py", "        mask = label == -1\n",
                       "        mask = label >= -1\n"),)),
    Mutant("distractors-collide-by-default", "distractors are loaded with physics whatever distractor_physics says",
           ("tests/test_envs_looks.py::test_distractors_stand_outside_the_workspace_with_labels_of_their_own",),
           edits=(Edit("pixelrig/envs/looks.py",
                       "        body = make_distractor(client, path, (0.0, 0.0, 0.0), quat, spec.distractor_physics)",
                       "        body = make_distractor(client, path, (0.0, 0.0, 0.0), quat, True)"),)),
    Mutant("looks-from-env-rng", "the looks' seed is drawn from the env's np_random (advancing it)",
           ("tests/test_envs_looks.py::test_looks_never_change_the_simulation",),
           edits=(Edit("pixelrig/envs/looks.py",
                       '    state = json.dumps(rng.bit_generator.state, sort_keys=True, default=str)',
                       '    state = str(rng.integers(2**62))'),)),
    Mutant("replay-looks-ignored", "replay(looks=...) re-renders the recorded looks",
           ("tests/test_datasets_looks.py::test_replay_under_three_looks_keeps_the_physics_and_changes_the_images",),
           edits=(Edit("pixelrig/datasets/replay.py", "    new_looks = ReplayLooks.of(looks, looks_seed)",
                       "    new_looks = ReplayLooks.of(looks, looks_seed) and None"),)),
    Mutant("collect-resume-restarts-from-zero", "a resumed collection runs its seeds again from the first one",
           ("tests/test_datasets_collect.py::test_a_killed_collection_resumes_to_the_uninterrupted_dataset",
            "tests/test_datasets_collect.py::test_resuming_goes_on_after_the_last_kept_seed"),
           edits=(Edit("pixelrig/datasets/collect.py",
                       '        tally.tried = int(attrs[-1]["seed"]) - settings["seed"] + 1',
                       "        tally.tried = 0"),)),
    Mutant("collect-keep-all-resume-repeats-a-seed", "resuming a keep='all' collection runs its last seed again "
           "(seeds 0, 1, 1)",
           ("tests/test_datasets_collect.py::test_resuming_either_keep_mode_gives_the_uninterrupted_dataset",),
           edits=(Edit("pixelrig/datasets/collect.py", 'tally.tried = int(attrs[-1]["seed"]) - settings["seed"] + 1',
                       'tally.tried = int(attrs[-1]["seed"]) - settings["seed"]'),)),
    Mutant("augment-copies-share-looks", "every copy of an episode is drawn under the first copy's looks",
           ("tests/test_datasets_augment.py::test_the_source_comes_first_as_stored_then_copies_with_its_physics_byte_"
            "for_byte[robomimic]",
            "tests/test_datasets_augment.py::test_each_episode_says_where_it_came_from_and_what_looks_it_got[lerobot]"),
           edits=(Edit("pixelrig/datasets/augment.py", "renderings = [(e, copy_looks_seed(seed, k)) for k in",
                       "renderings = [(e, copy_looks_seed(seed, 1)) for k in"),)),
    Mutant("augment-copies-numbered-from-zero", "the first copy of each episode says it is copy 0 (the source's "
           "number)",
           ("tests/test_datasets_augment.py::test_each_episode_says_where_it_came_from_and_what_looks_it_got[robomimic]",),
           edits=(Edit("pixelrig/datasets/augment.py", "                copy = 1 + j // n\n",
                       "                copy = j // n\n"),)),
    Mutant("collect-keeps-failures", "keep='success' keeps the episodes that failed too",
           ("tests/test_datasets_collect.py::test_keeps_the_successful_seeds_in_order_and_reports_them",
            "tests/test_datasets_collect.py::test_two_workers_write_the_same_bytes_as_one_process"),
           edits=(Edit("pixelrig/datasets/collect.py", '                    kept = keep == "all" or episode.success',
                       "                    kept = True"),)),
    Mutant("shadows-one-minus-p", "Randomization(shadows=p) casts shadows with probability 1 - p",
           ("tests/test_envs_looks_draws.py::test_shadows_are_cast_with_the_given_probability",
            "tests/test_envs_looks_draws.py::test_presets_draw_the_documented_shadow_share_and_elevations"),
           edits=(Edit("pixelrig/envs/looks.py", "bool(u[8] < spec.shadows)", "bool(u[8] > spec.shadows)"),)),
    Mutant("distractors-overlap", "distractors keep out of the workspace but not out of each other's way",
           ("tests/test_envs_looks_draws.py::test_distractors_stand_apart_outside_the_workspace_on_the_floor_of_"
            "their_area",),
           edits=(Edit("pixelrig/envs/looks.py",
                       "        keep_out.append(_Box(np.r_[xy - half[:2], 0.0], np.r_[xy + half[:2], 0.0]))\n", ""),)),
    Mutant("light-stream-shared", "the light's draw depends on how many distractors are drawn beside it",
           ("tests/test_envs_looks_draws.py::test_streams_are_independent_per_kind_body_and_distractor",),
           edits=(Edit("pixelrig/envs/looks.py", "u = np.random.default_rng([seed, _STREAM_LIGHT]).random(9)",
                       "u = np.random.default_rng([seed, _STREAM_LIGHT, spec.distractors]).random(9)"),)),
    Mutant("gripper-offset-sign", "the gear that couples the gripper's joints aims at lower_0 + lower_i * ratio, not "
           "lower_0 - lower_i * ratio (the same for the Panda, whose fingers both close at 0)",
           ("tests/test_envs_control.py::test_coupled_gripper_joints_hold_the_same_fraction_of_their_ranges",),
           edits=(Edit("pixelrig/control/gripper.py", "relativePositionTarget=lower[0] - lo * scale",
                       "relativePositionTarget=lower[0] + lo * scale"),)),
    Mutant("ee-quat-not-renormalised", "a delta mode's turned target quaternion is multiplied by its length instead "
           "of divided: rounding compounds over the steps",
           ("tests/test_control_step_properties.py::test_many_small_turns_keep_the_target_quaternion_unit",),
           edits=(Edit("pixelrig/control/task_space.py", "turned / np.linalg.norm(turned)",
                       "turned * np.linalg.norm(turned)"),)),
    Mutant("workspace-flat-axis", "a workspace with low == high on an axis is accepted",
           ("tests/test_envs_control.py::test_each_controller_setting_is_checked_with_its_whole_message",),
           edits=(Edit("pixelrig/control/task_space.py", "if not np.all(low < high):",
                       "if not np.all(low <= high):"),)),
    Mutant("stack-align-to-b", "Stack's align stage measures A's distance to B's centre, not to A's place on B",
           ("tests/test_envs_documented_tasks.py::test_the_dense_reward_is_the_documented_weighted_stages"
            "[pixelrig/PandaStack-v0]",),
           edits=(Edit("pixelrig/envs/manipulation.py",
                       '"align": closeness(float(np.linalg.norm(a - self.stack_target()))),',
                       '"align": closeness(float(np.linalg.norm(a - self.position("cube_b")))),'),)),
    Mutant("push-target-in-default-client", "PandaPush moves its target disc in pybullet's default client, another "
           "env's when several are open",
           ("tests/test_tasks_reach_push.py::test_two_envs_open_at_once_each_keep_their_own_bodies"
            "[pixelrig/PandaPush-v0]",),
           edits=(Edit("pixelrig/tasks/push.py",
                       "p.resetBasePositionAndOrientation(self.target, self.target_pos.tolist(), (0, 0, 0, 1), "
                       "physicsClientId=c)",
                       "p.resetBasePositionAndOrientation(self.target, self.target_pos.tolist(), (0, 0, 0, 1))"),)),
    Mutant("grasp-never-gives-up-descending", "the picking experts' descent waits 250 steps, not 25, for the body "
           "to come between the fingers",
           ("tests/test_experts_units.py::test_grasp_descends_at_half_speed_and_closes_within_6_mm_or_between_the_"
            "fingers_or_after_25_steps",),
           edits=(Edit("pixelrig/experts/pick.py", "self.holds(self.body) or self.steps_in_phase >= 25:",
                       "self.holds(self.body) or self.steps_in_phase >= 250:"),)),
    Mutant("frame-stack-refusal-closes-env", "a FrameStack refused (bad num_frames) wraps the vector env first, so "
           "once collected it closes the env it refused",
           ("tests/test_vector_stack.py::test_bad_input_is_refused_with_the_fix",),
           edits=(Edit("pixelrig/vector/stack.py", "        # checked before wrapping env: a refused FrameStack, once "
                       "collected, must not close the env it refused\n", "        super().__init__(env)\n"),
                  Edit("pixelrig/vector/stack.py", "        single = stacked_space(env.single_observation_space, "
                       "num_frames)\n        super().__init__(env)\n",
                       "        single = stacked_space(env.single_observation_space, num_frames)\n"))),
    Mutant("sb3-unmasked-info-dropped", "SB3's per-env infos drop a key that comes without its '_key' mask instead of "
           "giving it to every env",
           ("tests/test_integrations_sb3_infos.py::test_env_infos_gives_back_each_envs_info",),
           edits=(Edit("pixelrig/integrations/sb3.py", 'mask = infos.get(f"_{key}", np.ones(num_envs, bool))',
                       'mask = infos.get(f"_{key}", np.zeros(num_envs, bool))'),)),
    Mutant("batched-workers-drop-reset-options", "a batched vector env's worker processes reset their envs without "
           "the reset options",
           ("tests/test_vector_batched_api.py::test_two_workers_give_what_one_process_gives",),
           edits=(Edit("pixelrig/vector/batched.py", 'messages.append(("reset", ([seeds[i] for i in indices], options, '
                       'part)))', 'messages.append(("reset", ([seeds[i] for i in indices], None, part)))'),)),
    Mutant("batched-workers-join-mpi", "a batched vector env's worker processes keep an MPI launcher's OMPI_* and "
           "PMI_* variables (under mpirun each would try to join the MPI job)",
           ("tests/test_vector_batched_api.py::test_workers_start_without_an_mpi_launchers_variables_and_with_the_"
            "rest",),
           edits=(Edit("pixelrig/vector/batched.py", 'stdout="inherit", env=no_mpi))', 'stdout="inherit"))'),)),
    Mutant("workspace-without-bases", "the default workspace box skips every body's base link (a table or a box of "
           "a base alone is not kept free of distractors)",
           ("tests/test_envs_looks_properties.py::test_the_default_workspace_and_area_are_the_envs_own_world_beside_"
            "another",),
           edits=(Edit("pixelrig/envs/looks.py", "for link in range(-1, p.getNumJoints(body, physicsClientId=c)):",
                       "for link in range(p.getNumJoints(body, physicsClientId=c)):"),)),
    Mutant("background-stream-unsalted", "PixelObs's background draws from the episode seed's own stream, the one "
           "gymnasium seeds the env with, not a salted one apart from it",
           ("tests/test_wrappers_background_properties.py::test_an_episode_seed_gives_the_salted_stream_apart_from_"
            "the_envs",),
           edits=(Edit("pixelrig/wrappers/background.py", "np.random.SeedSequence(seed, spawn_key=(BACKGROUND_SALT,))",
                       "np.random.SeedSequence(seed)"),)),
    Mutant("distractors-restored-without-physics", "a restore makes colliding distractors again as visual-only ones",
           ("tests/test_envs_looks_properties.py::test_distractors_with_physics_are_made_again_with_it_by_a_restore",),
           edits=(Edit("pixelrig/envs/looks.py", "entry[6:10], bool(entry[13]))", "entry[6:10], False)"),)),
)


CACHE = cache_root()
"""This machine's pixelrig cache."""
CACHED = ("meshes", "models", "objects", "renderer-probes.json")
"""What pixelrig keeps there, which each mutant's run gets a copy of (not the venvs and wheels the scripts keep)."""


def tracked_files() -> list[str]:
    """The files of the working tree git knows of or would add (tracked, plus untracked files not ignored)."""
    out = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"], cwd=ROOT,
                         check=True, capture_output=True).stdout.decode()
    return [f for f in out.split("\0") if f and (ROOT / f).is_file()]


def copy_tree(dest: Path, files: list[str]) -> None:
    for rel in files:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / rel, target)


def apply(mutant: Mutant, tree: Path) -> None:
    """Apply the mutant's edits to ``tree``; raise ``ValueError`` naming the edit that no longer applies."""
    for edit in mutant.edits:
        path = tree / edit.path
        text = path.read_text()
        count = text.count(edit.old)
        if count != 1:
            raise ValueError(f"mutant {mutant.name!r}: its edit of {edit.path} matches {count} places (must be 1): "
                             f"update the mutant with the code it breaks:\n{edit.old}")
        path.write_text(text.replace(edit.old, edit.new))


def node_id(test: str) -> str:
    """A pytest node id as junit reports name it: ``tests/test_x.py::test_y`` -> ``tests.test_x::test_y``."""
    path, _, name = test.partition("::")
    return f"{path.removesuffix('.py').replace('/', '.')}::{name}"


def failures(junit: Path) -> list[str]:
    """The test ids (``tests.test_x::test_y[case]``) that failed or errored in a junit XML report."""
    if not junit.exists():
        return []
    failed = []
    for case in ET.parse(junit).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed.append(f"{case.get('classname')}::{case.get('name')}")
    return failed


def run(mutant: Mutant, files: list[str], verbose: bool, baseline: bool = False) -> tuple[bool, str, float]:
    """Run one mutant: (killed, what happened, seconds). With ``baseline``, run its tests on the unmutated copy
    (and its machine environment left out): (passed, what happened, seconds)."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix=f"pixelrig-mutant-{mutant.name}-") as tmp:
        tree = Path(tmp) / "tree"
        copy_tree(tree, files)
        if baseline:
            mutant = Mutant(mutant.name, mutant.breaks, mutant.tests)
        else:
            apply(mutant, tree)
        junit = Path(tmp) / "junit.xml"
        # a cache of its own (a copy of this machine's: meshes, renderer probes), so that what a mutant writes there
        # reaches no other mutant, run beside it or after it, and no later run
        own_cache = Path(tmp) / "cache"
        own_cache.mkdir()
        for name in CACHED:
            if (CACHE / name).is_dir():
                shutil.copytree(CACHE / name, own_cache / name)
            elif (CACHE / name).is_file():
                shutil.copy2(CACHE / name, own_cache / name)
        env = {**os.environ, **mutant.env, "PIXELRIG_CACHE_DIR": str(own_cache),
               "PYTHONPATH": os.pathsep.join(filter(None, [str(tree), os.environ.get("PYTHONPATH")]))}
        cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
               f"--junitxml={junit}", *mutant.tests]
        proc = subprocess.run(cmd, cwd=tree, env=env, capture_output=True, text=True)
        seconds = time.monotonic() - start
        if verbose:
            print(proc.stdout[-4000:], proc.stderr[-2000:], sep="\n")
        failed = failures(junit)
        if baseline:
            return proc.returncode == 0, "the named tests pass" if proc.returncode == 0 else \
                f"the named tests fail unmutated (exit status {proc.returncode}): {failed}", seconds
        if proc.returncode == 1 and failed:
            passed = [test for test in mutant.tests if not any(f.startswith(node_id(test)) for f in failed)]
            if passed:
                return False, f"SURVIVED {', '.join(passed)} (killed by {', '.join(failed)})", seconds
            return True, f"killed: {len(failed)} failed, first {failed[0]}", seconds
        if proc.returncode == 0:
            return False, "SURVIVED: every named test passed", seconds
        tail = "\n    ".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
        return False, f"the run broke (pytest exit status {proc.returncode}), not a kill:\n    {tail}", seconds


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="mutants to run (default: all)")
    parser.add_argument("--list", action="store_true", help="list the mutants and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="print each run's pytest output")
    parser.add_argument("--baseline", action="store_true", help="run the named tests unmutated: they must pass")
    parser.add_argument("-j", "--jobs", type=int, default=os.cpu_count() or 1,
                        help="mutants run at once, each in its own tree and pytest process (default: the CPUs)")
    args = parser.parse_args(argv)
    if args.jobs < 1:
        parser.error(f"--jobs {args.jobs}: pass 1 or more")
    by_name = {m.name: m for m in MUTANTS}
    unknown = [n for n in args.names if n not in by_name]
    if unknown:
        parser.error(f"unknown mutants {unknown}; choose from {sorted(by_name)}")
    chosen = [by_name[n] for n in args.names] if args.names else list(MUTANTS)
    if args.list:
        for m in chosen:
            print(f"{m.name}: {m.breaks}\n    killed by: {' '.join(m.tests)}")
        return 0
    files = tracked_files()
    survived = []
    total = time.monotonic()
    def attempt(m: Mutant) -> tuple[bool, str, float]:
        try:
            return run(m, files, args.verbose, args.baseline)
        except ValueError as e:
            return False, str(e), 0.0

    # each mutant is a pytest process of its own in a tree of its own: they run side by side, reported in order
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        for m, (killed, what, seconds) in zip(chosen, pool.map(attempt, chosen), strict=True):
            print(f"{'ok  ' if killed else 'FAIL'} {m.name} ({seconds:.0f} s): {what}", flush=True)
            if not killed:
                survived.append(m.name)
    done = "passed unmutated" if args.baseline else "killed"
    print(f"{len(chosen) - len(survived)}/{len(chosen)} mutants {done} in {time.monotonic() - total:.0f} s")
    if survived:
        print(f"not {done}: {', '.join(survived)}")
    return 1 if survived else 0


if __name__ == "__main__":
    sys.exit(main())

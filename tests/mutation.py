"""Mutation testing with a real tool: mutmut over the third round's modules, each with the tests of its room.

mutmut (3.x) makes every mutant its operators give (numbers, comparisons, boolean and arithmetic operators, strings,
arguments, return values...) of each module of a group, maps each function to the tests that run it, and runs those
tests against each mutant in a forked worker. This driver runs one mutmut session per group in a temporary copy of
the tree (mutmut writes its ``mutants/`` folder beside the sources), with Hypothesis's ``mutation`` profile (no
shrinking, derandomised: a mutant is killed or not, the same each run), then reads mutmut's results and writes
``docs/mutation.json`` and the table of ``docs/mutation.md``: per module the mutants, the killed (timeouts count as
killed: the mutant hangs what it broke; so do segfaults: it crashed the tests), the survivors, those no selected test
reaches, the ones judged equivalent (:data:`EQUIVALENT`, each with its reason) and the kill rate over the
non-equivalent ones.

    python -m tests.mutation                 # every group (make mutation; hours on 2 cores)
    python -m tests.mutation lens noise      # some groups
    python -m tests.mutation --list          # the groups, their modules and tests
    python -m tests.mutation lens --keep /tmp/mm   # keep mutmut's tree: `cd /tmp/mm/lens && mutmut show NAME`
    python -m tests.mutation lens --keep /tmp/mm --rerun   # its survivors again, against today's tests ("re-run")
    kill -TERM <driver's pid>                # stop a run: what ran is written as a "partial" row
    python -m tests.mutation lens --keep /tmp/mm --resume  # go on with a stopped run's mutants not run yet

A group's result replaces its modules' rows in docs/mutation.json; the others are kept.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tests.mutants import ROOT, copy_tree, tracked_files

RESULTS = ROOT / "docs" / "mutation.json"
PAGE = ROOT / "docs" / "mutation.md"
TABLE_START, TABLE_END = "<!-- mutation-table:start -->", "<!-- mutation-table:end -->"


@dataclass(frozen=True)
class Group:
    """Modules mutated together and the tests run against their mutants."""

    modules: tuple[str, ...]
    tests: tuple[str, ...]


GROUPS: dict[str, Group] = {
    "lens": Group(("pixelrig/cameras/lens.py",),
                  ("tests/test_cameras_lens_properties.py", "tests/test_cameras_sensors_properties.py",
                   "tests/test_cameras_sensors.py")),
    "noise": Group(("pixelrig/cameras/noise.py",),
                   ("tests/test_cameras_noise_properties.py", "tests/test_cameras_sensors_properties.py",
                    "tests/test_cameras_sensors.py", "tests/test_wrappers_sensors.py")),
    "stereo": Group(("pixelrig/cameras/stereo.py",),
                    ("tests/test_cameras_stereo_properties.py", "tests/test_cameras_sensors_properties.py",
                     "tests/test_cameras_sensors.py")),
    "timeline": Group(("pixelrig/cameras/sensors.py",),
                      ("tests/test_cameras_timeline_properties.py", "tests/test_cameras_sensors_properties.py",
                       "tests/test_wrappers_sensors.py")),
    # the SO-101's tasks drive the pitch-and-roll mode and the offset grasp point
    "controller": Group(("pixelrig/control/task_space.py",),
                        ("tests/test_control_step_properties.py", "tests/test_envs_control.py",
                         "tests/test_tasks_so101.py")),
    "gripper": Group(("pixelrig/control/gripper.py",),
                     ("tests/test_control_step_properties.py", "tests/test_envs_control.py")),
    "looks": Group(("pixelrig/envs/looks.py", "pixelrig/envs/presets.py"),
                   ("tests/test_envs_looks_properties.py", "tests/test_envs_looks_draws.py",
                    "tests/test_envs_looks.py")),
    "backgrounds": Group(("pixelrig/wrappers/background.py", "pixelrig/render/procedural.py"),
                         ("tests/test_wrappers_background_properties.py", "tests/test_render_procedural_properties.py",
                          "tests/test_wrappers_background.py")),
    "autoreset": Group(("pixelrig/vector/autoreset.py",),
                       ("tests/test_vector_autoreset_properties.py", "tests/test_vector_autoreset.py",
                        "tests/test_vector_autoreset_infos.py")),
    "sb3": Group(("pixelrig/integrations/sb3.py",), ("tests/test_integrations_sb3_infos.py",
                                                     "tests/test_integrations_sb3.py")),
    # collect's own logic (the kills, the CLI and replay run in processes of their own: minutes per mutant)
    "collect": Group(("pixelrig/datasets/collect.py",),
                     tuple("tests/test_datasets_collect.py::" + t for t in (
                         "test_keeps_the_successful_seeds_in_order_and_reports_them",
                         "test_keep_all_keeps_failures_with_their_flag",
                         "test_an_expert_that_fails_too_often_is_named_and_keeps_what_it_has",
                         "test_two_workers_write_the_same_bytes_as_one_process[lerobot]",
                         "test_an_error_in_a_worker_is_raised_here",
                         "test_existing_datasets_are_refused_untouched_or_replaced",
                         "test_resuming_goes_on_after_the_last_kept_seed",
                         "test_resuming_either_keep_mode_gives_the_uninterrupted_dataset",
                         "test_bad_input_is_named_and_touches_nothing",
                         "test_short_names_and_ids_name_the_same_task",
                         "test_videos_for_other_cameras_are_refused_naming_both",
                         "test_the_files_are_the_ones_dataset_recorder_writes",
                         "test_the_summary_words_the_counts_the_processes_and_what_was_there",
                         "test_resuming_a_collection_that_started_past_seed_0_goes_on_after_its_last_seed",
                         "test_resuming_with_nothing_to_run_makes_no_env",
                         "test_only_kept_episodes_are_encoded",
                         "test_an_so101_collection_records_the_real_robot_in_lerobot_only",
                         "test_no_more_processes_than_attempts_left",
                         "test_workers_1_takes_env_kwargs_a_worker_process_could_not_load",
                         "test_the_short_names_a_refusal_lists_each_name_a_task_with_an_expert",
                         "test_the_renderer_is_the_one_passed_else_pixelrig_renderer",
                         "test_the_progress_bar_is_on_by_default",
                     ))),
    # the pick-place and stack goals live in envs/manipulation.py (PickPlaceGoal, StackGoal), shared with the SO-101's
    "tasks-panda": Group(("pixelrig/tasks/stack.py", "pixelrig/tasks/lift.py", "pixelrig/tasks/pick_place.py",
                          "pixelrig/envs/manipulation.py"),
                         ("tests/test_envs_documented_tasks.py", "tests/test_envs_tasks_manipulation.py",
                          "tests/test_tasks_goal_obs.py", "tests/test_tasks_so101.py",
                          # what the default cameras see and where the cubes and goals are drawn (tiny goldens)
                          *(f"tests/test_render_golden.py::test_golden_scene[tiny-{scene}]" for scene in (
                              "pandalift", "pandapickplace", "pandastack", "so101pickplace", "so101stack")))),
    "tasks-peg": Group(("pixelrig/tasks/peg_insert.py",),
                       ("tests/test_envs_documented_tasks.py", "tests/test_envs_tasks_manipulation.py")),
    "tasks-goal": Group(("pixelrig/tasks/reach.py", "pixelrig/tasks/push.py"),
                        ("tests/test_tasks_reach_push.py", "tests/test_tasks_goal_obs.py",
                         "tests/test_envs_tasks_and_checkers.py")),
    "tasks-objects": Group(("pixelrig/tasks/pick_object.py",),
                           ("tests/test_envs_tasks_manipulation.py", "tests/test_envs_documented_tasks.py")),
    "tasks-other": Group(("pixelrig/tasks/cartpole.py", "pixelrig/tasks/ant.py", "pixelrig/tasks/hopper.py",
                          "pixelrig/tasks/walker2d.py", "pixelrig/tasks/half_cheetah.py", "pixelrig/tasks/__init__.py"),
                         ("tests/test_tasks_locomotion.py", "tests/test_tasks_registration.py",
                          "tests/test_envs_tasks_and_checkers.py", "tests/test_envs_observation_bounds.py",
                          "tests/test_envs_observation_terms.py", "tests/test_envs_fast_reset.py",
                          # what the default cameras and render() see (goldens on TinyRenderer)
                          "tests/test_render_golden.py::test_golden_scene[tiny-cartpole]",
                          "tests/test_render_golden.py::test_golden_scene[tiny-ant]",
                          "tests/test_render_golden.py::test_render_mode_rgb_array_draws_the_golden_frame")),
    "experts-pick": Group(("pixelrig/experts/pick.py",), ("tests/test_experts_units.py", "tests/test_experts.py")),
    "experts-base": Group(("pixelrig/experts/base.py", "pixelrig/experts/__init__.py"),
                          ("tests/test_experts_units.py", "tests/test_experts.py", "tests/test_tasks_registration.py")),
    "experts-other": Group(("pixelrig/experts/peg.py", "pixelrig/experts/push.py"),
                           ("tests/test_experts_units.py", "tests/test_experts.py",
                            "tests/test_envs_tasks_and_checkers.py")),
    "stack": Group(("pixelrig/vector/stack.py",), ("tests/test_vector_stack.py",)),  # seconds, not the batch's minutes
    "batch": Group(("pixelrig/vector/batched.py", "pixelrig/vector/shared.py"),
                   ("tests/test_vector_batched_api.py", "tests/test_vector_autoreset_properties.py",
                    "tests/test_vector.py::test_shared_layout_holds_every_space_kind_and_names_the_others",
                    "tests/test_vector.py::test_worker_exception_is_raised_with_its_traceback",
                    "tests/test_vector.py::test_dead_worker_is_reported_not_a_hang",
                    "tests/test_vector.py::test_worker_dying_at_start_is_reported_with_its_exit_code_and_stderr",
                    # the batched gl tests that take seconds, not the two that start workers for pixels (the
                    # scripted envs of test_vector_batched_api.py do that in a fraction of their time)
                    "tests/test_vector_batched.py::test_tiny_renderer_is_allowed_and_bitwise_equal_to_lone_envs",
                    "tests/test_vector_batched.py::test_bad_input_raises_before_anything_starts",
                    "tests/test_vector_batched.py::test_a_step_draws_each_part_of_the_envs_in_one_gl_pass",
                    "tests/test_vector_batched.py::test_first_observations_equal_lone_gl_envs_seeded_seed_plus_i",
                    "tests/test_vector_batched.py::test_sensor_cameras_in_a_batched_env_equal_a_sync_one",
                    "tests/test_vector_batched.py::test_steps_drawn_in_parts_are_deterministic_and_match_one_pass",
                    "tests/test_vector_batched.py::test_reset_options_reach_envs_whose_pixels_are_drawn_later")),
}
"""Every group by name."""

_GEAR_AXIS = ("a gear constraint's joint axis is unused: pybullet's btMultiBodyGearConstraint reads the two joints' "
              "positions only (checked: the Panda's coupled fingers driven for 1 s, bit-identical with None, (2, 0, "
              "0), (1, 1, 0), (1, 0, 1))")
_GEAR_PIVOT = ("a gear constraint's pivots are unused: pybullet's btMultiBodyGearConstraint reads the two joints' "
               "positions only (checked: the Panda's coupled fingers driven for 1 s, bit-identical with None and each "
               "unit vector, parent and child)")
_GRIPPER_DTYPE = ("the other limit array is float64, and numpy promotes an integer or float32 array against it "
                  "exactly: the same targets (lower + frac * (upper - lower)) and the same tolist() values for the "
                  "coupling")

_BUILT_THEN_PLACED = ("where a body is first built is never seen: every reset places it "
                      "(resetBasePositionAndOrientation) before the first observation, and Gymnasium requires a "
                      "reset before any step")
_NO_SUCH_SHAPE = ("a collision shape index that names no shape (nothing in the env's world is made with "
                  "createCollisionShape) gives a body no collision shape, as -1 does (checked: "
                  "getCollisionShapeData is empty with +1 and -2)")
_DRAWN_AT_RESET = "the value before the first reset is never read: reset_task draws it before the first observation"
_GOAL_OBS_DEFAULT = ("distance_reward_type tests `goal_obs is True`: a missing goal_obs read as None fails it as "
                     "False does")

_EXACT_BOUND = ("a healthy range's bound taken as inclusive: the state would have to sit exactly on the bound (a "
                "float a simulation step reaches with probability 0)")
_INIT_DECLARES_NONE = ("the package's __init__.py declares no REGISTRATION, so reading it gives None, as skipping it "
                       "does: the check spares one parse")
_SYNTAX_FILENAME = ("the file name ast.parse is given only appears in a SyntaxError's message, and every task module "
                    "parses (the registration tests read each)")
_AT_THRESHOLD = ("< vs <= (or > vs >=) at a value exactly equal to a documented threshold: a distance, speed, "
                 "opening or uniform draw that equals it has probability 0 (the tests check each threshold from both "
                 "sides)")
_QUAT_CLIP = ("pybullet's quaternions are unit, each component within about 1e-16 of [-1, 1], and the observation is "
              "float32, which rounds anything that close to +-1 to +-1: the clip at +-1 (at +-2, or at one side only) "
              "never changes an observation")
_NORMALISED_QUAT = ("pybullet normalises the quaternion it is given: (0, 0, 0, 2) sets the same pose as (0, 0, 0, 1) "
                    "(checked: getBasePositionAndOrientation gives back (0, 0, 0, 1))")
_OPTIONS_UNREAD = ("the Panda tasks' base reset_task resets the arm and never reads its options: None gives the same "
                   "reset")
_SUCCESS_AGAIN = ("success computed again from the same state instead of handed in: is_success reads the state "
                  "only, so the same value")
_CAMERA_SIZE = "Camera's default size is 84x84, the size given: dropping width= or height= gives the same camera"
_NEAR_ROUNDING = ("the camera's near plane at Camera's default 0.01 m instead of 0.05 m: nothing in its view is that "
                  "close, so only the depth buffer's rounding changes (checked on the golden scene: depth by at most "
                  "0.16 mm, RGB and labels bit for bit)")
_FRONT_FAR = ("the front camera's far plane at 5 m or at Camera's default 10 m instead of 4 m: nothing in its view is "
              "farther than 4 m, so only the depth buffer's rounding changes (checked on the golden scene: depth by at"
              " most 0.05 mm, RGB and labels bit for bit)")
_SPHERE_TURNED = ("the target is a drawn sphere, which no reading of the env turns: a turned one changes only which "
                  "facets of pybullet's tessellated sphere face a camera (checked on the golden scene: at most 3 RGB "
                  "levels in 2 pixels and 1.8 mm of depth in 9, at 84x84)")
_MULTIBODY_DAMPING = ("damping belongs to the whole multibody in pybullet: changeDynamics with any link index, valid "
                      "or not, sets it for all (checked: 300 driven steps of the cart-pole bit-identical with -1, 1, "
                      "-2 and 5)")
_BOX_DEFAULTS = ("Gymnasium's Box makes scalar bounds without a shape shape (1,), and float32 is its default dtype: "
                 "the same space (checked: equal to Box(-1, 1, (1,), float32))")
_NONEMPTY_STEP = ("np.max's initial is read only for an empty array, and capped is only handed an arm's joint step, "
                  "never empty (arm_chain refuses an arm without joints); an initial of 1.0 makes the ratio at least "
                  "1, which scales nothing either")
_FK_CURRENT = ("pybullet keeps a multibody's link frames current: it recomputes them when the body is loaded, when a "
               "joint is reset and on every step, so a link state read without computeForwardKinematics (or with 2, "
               "also true) is the same (checked: after resetting a joint, and by the reach and offset tests)")
_ZERO_PULL = ("a null-space pull of zeros instead of none when nullspace_gain is 0: dls_step then adds 0 and subtracts"
              " J 0 = 0, exactly: the same step, bit for bit")
_FLOAT_CORNERS = ("the workspace corners are tuples of Python floats (TaskSpaceConfig keeps them so, tested) or "
                  "reach_box's float64 arrays: np.asarray makes them float64 with or without the dtype")
_UTF8_NAMES = ("the link and body names pybullet gives are the model file's, valid UTF-8 text (URDF is XML): the "
               "decode's error handler is never looked up, whatever its name")

_FATAL_TRUTH = ("fatal=None instead of False: BatchedVectorEnv._ask_all reads fatal only as a truth value "
                "(`if fatal:`), and None is false")
_NAMES_CANNOT_FAIL = ("wrapper_names as fatal: a worker answers it with its envs' wrapper classes' names "
                      "(stack_names runs no env code), so it cannot fail there and fatal is never read; a worker "
                      "that died fails the vector env either way")
_COUNTED_FIRST = ("zip's strict check dropped: BatchedVectorEnv refuses a count of seeds (reset), actions (step) "
                  "or values (set_attr) other than num_envs before handing them on, and hands each batch exactly "
                  "its envs' share, so the lengths always match")
_ONE_ANSWER_EACH = ("zip's strict check dropped where the lengths match by construction: call_at makes one list "
                    "of indices per worker and reads one answer per worker, and a worker answers one value per "
                    "index it is given (or raises)")
_ONE_PER_SIDE = ("zip's strict check dropped where both sides are built one entry per worker (the messages, the "
                 "answers) or per env (a step's infos and finals, a part's envs and the frames drawn for them) by "
                 "the code beside it, so the lengths always match")
_HELPER_WORDS = ("the words a worker's Helper puts in its own messages (what=, doing=): batched.py catches every "
                 "HelperFailed a worker raises (at start, in send and recv) and raises its own message instead, "
                 "naming the worker by its index and what the vector env was doing, so the helper's are never shown")
_START_FAILED_UNSEEN = ("the reason kept when a worker fails at start: the constructor closes the vector env and "
                        "raises, so no caller ever holds it to be told the reason")
EQUIVALENT: dict[str, str] = {
    "pixelrig.experts.peg.xǁPegInsertExpertǁact__mutmut_64":
        "slice(None, 2) is slice(0, 2)",
    "pixelrig.experts.peg.xǁPegInsertExpertǁact__mutmut_66":
        "slice(2) is slice(0, 2)",
    "pixelrig.experts.peg.xǁPegInsertExpertǁact__mutmut_76":
        "< vs <= at a turn of exactly 0.03 rad: measure zero for floats",
    "pixelrig.experts.peg.xǁPegInsertExpertǁact__mutmut_171":
        "< vs <= at a lift of exactly 5 mm: measure zero for floats",
    "pixelrig.experts.peg.xǁPegInsertExpertǁact__mutmut_203":
        "< vs <= at exactly 1.5 mm across: measure zero for floats",
    "pixelrig.experts.peg.xǁPegInsertExpertǁact__mutmut_206":
        "< vs <= at a turn of exactly 0.026 rad: measure zero for floats",
    "pixelrig.experts.push.xǁPushExpertǁ__call____mutmut_8":
        "the cube's slice one longer: the expert reads cube[:2] only",
    "pixelrig.experts.push.xǁPushExpertǁ__call____mutmut_10":
        "the target's slice one longer: the expert reads target[:2] only",
    "pixelrig.experts.push.xǁPushExpertǁ__call____mutmut_36":
        "< vs <= at exactly 1.5 cm behind the cube: measure zero for floats",
    "pixelrig.experts.push.xǁPushExpertǁ__call____mutmut_47":
        "< vs <= at exactly 1 cm over the push height: measure zero for floats",
    "pixelrig.experts.push.xǁPushExpertǁ__call____mutmut_63":
        "> vs >= at exactly 12 cm from the cube: measure zero for floats",
    "pixelrig.tasks.pick_object.xǁPandaPickObjectEnvǁbuild_task_objects__mutmut_10":
        _BUILT_THEN_PLACED,
    "pixelrig.tasks.pick_object.xǁPandaPickObjectEnvǁbuild_task_objects__mutmut_13":
        _BUILT_THEN_PLACED,
    "pixelrig.tasks.pick_object.xǁPandaPickObjectEnvǁbuild_task_objects__mutmut_14":
        _BUILT_THEN_PLACED,
    "pixelrig.tasks.pick_object.xǁPandaPickObjectEnvǁ__init____mutmut_2":
        "the object first built is the world's until the first reset, which draws object_index and rebuilds the "
        "world when it differs (world_state): the same world as if it had been built with the drawn one",
    "pixelrig.tasks.pick_object.xǁPandaPickObjectEnvǁ__init____mutmut_3":
        _DRAWN_AT_RESET,
    "pixelrig.tasks.pick_object.xǁPandaPickObjectEnvǁis_success__mutmut_1":
        ">= vs > at exactly the lift height: measure zero for floats",
    "pixelrig.tasks.pick_object.x__vertices__mutmut_3":
        "every OBJECTS mesh's v lines hold three numbers, so [1:5] reads what [1:4] does (checked: all 41 files)",
    "pixelrig.tasks.pick_object.x__vertices__mutmut_21":
        "numpy reads any negative size in reshape as the unknown one: reshape(-2, 3) is reshape(-1, 3)",
    "pixelrig.tasks.pick_object.x_fits_the_hand__mutmut_6":
        "< vs <= at a size exactly on the hand's range's bound: measure zero for a mesh's float extents",
    "pixelrig.tasks.pick_object.x_fits_the_hand__mutmut_7":
        "< vs <= at a size exactly on the hand's range's bound: measure zero for a mesh's float extents",
    "pixelrig.tasks.pick_object.x_fits_the_hand__mutmut_10":
        "< vs <= at a size exactly on the hand's range's bound: measure zero for a mesh's float extents",
    "pixelrig.tasks.pick_object.x_fits_the_hand__mutmut_11":
        "< vs <= at a size exactly on the hand's range's bound: measure zero for a mesh's float extents",
    "pixelrig.tasks.pick_object.x_stands_still__mutmut_50":
        "< vs <= at exactly the standing test's bound: measure zero for floats",
    "pixelrig.tasks.pick_object.x_stands_still__mutmut_54":
        "< vs <= at exactly the standing test's bound: measure zero for floats",
    "pixelrig.tasks.pick_object.x_stands_still__mutmut_58":
        "< vs <= at exactly the standing test's bound: measure zero for floats",
    "pixelrig.tasks.pick_object.x_stands_still__mutmut_44":
        "a rotation matrix's entry exceeds 1 only by rounding, which acos would reject either way; min(2.0, .) "
        "and min(1.0, .) agree on every object (OBJECTS derived again unchanged)",
    "pixelrig.tasks.pick_object.x_stands_still__mutmut_55":
        "no object of the 355 that fit the hand, leaning under 5 degrees and turning under 0.02 rad/s after 1 s, "
        "still slides faster than 2 mm/s: the speed bound never decides (OBJECTS derived again unchanged)",
    "pixelrig.tasks.x_declared__mutmut_4": _SYNTAX_FILENAME,
    "pixelrig.tasks.x_task_specs__mutmut_9": _INIT_DECLARES_NONE,
    "pixelrig.tasks.x_task_specs__mutmut_12": _INIT_DECLARES_NONE,
    "pixelrig.tasks.x_task_specs__mutmut_13": _INIT_DECLARES_NONE,
    "pixelrig.tasks.ant.xǁAntEnvǁis_healthy__mutmut_5": _EXACT_BOUND,
    "pixelrig.tasks.ant.xǁAntEnvǁis_healthy__mutmut_6": _EXACT_BOUND,
    "pixelrig.tasks.ant.xǁAntEnvǁreset_task__mutmut_1": ("the locomotion base's reset_task never reads its options "
                                                         "(passing None instead changes nothing)"),
    "pixelrig.tasks.ant.xǁAntEnvǁextra_costs__mutmut_14": ("a contact's normal force is never negative in pybullet, so "
                                                           "clipping it below at 0 or not is the same"),
    "pixelrig.tasks.ant.xǁAntEnvǁextra_costs__mutmut_8": "the sum over no contacts is 0.0 too",
    "pixelrig.tasks.hopper.xǁHopperEnvǁis_healthy__mutmut_12": _EXACT_BOUND,
    "pixelrig.tasks.hopper.xǁHopperEnvǁis_healthy__mutmut_13": _EXACT_BOUND,
    "pixelrig.tasks.hopper.xǁHopperEnvǁis_healthy__mutmut_16": _EXACT_BOUND,
    "pixelrig.tasks.hopper.xǁHopperEnvǁis_healthy__mutmut_17": _EXACT_BOUND,
    "pixelrig.tasks.hopper.xǁHopperEnvǁis_healthy__mutmut_21": _EXACT_BOUND,
    "pixelrig.tasks.cartpole.xǁCartPoleEnvǁevaluate__mutmut_13": _EXACT_BOUND,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁ__init____mutmut_10": _GOAL_OBS_DEFAULT,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁ__init____mutmut_12": _GOAL_OBS_DEFAULT,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁ__init____mutmut_16": _DRAWN_AT_RESET,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁ__init____mutmut_17": _DRAWN_AT_RESET,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁ__init____mutmut_18": _DRAWN_AT_RESET,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁ__init____mutmut_19": _DRAWN_AT_RESET,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁ__init____mutmut_20": _DRAWN_AT_RESET,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁ__init____mutmut_21": _DRAWN_AT_RESET,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_13": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_18": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_35": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_36": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_37": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_38": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_39": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_40": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_63": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_68": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_99": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_100": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_101": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_102": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_103": _BUILT_THEN_PLACED,
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁbuild_task_objects__mutmut_98":
        "five colours for the block's four boxes: pybullet reads one per shape and ignores the fifth (checked: "
        "getVisualShapeData gives the same four colours)",
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁgoal_values__mutmut_8":
        "the clip guards rounding past +-1; the hole's quaternion turns about z only and stays inside "
        "(checked: its largest component over seeds 0-999 is 0.99999998), so no bound of the clip is ever met",
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁgoal_values__mutmut_9":
        "the clip guards rounding past +-1; the hole's quaternion turns about z only and stays inside "
        "(checked: its largest component over seeds 0-999 is 0.99999998), so no bound of the clip is ever met",
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁgoal_values__mutmut_14":
        "the clip guards rounding past +-1; the hole's quaternion turns about z only and stays inside "
        "(checked: its largest component over seeds 0-999 is 0.99999998), so no bound of the clip is ever met",
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁgoal_values__mutmut_15":
        "the clip guards rounding past +-1; the hole's quaternion turns about z only and stays inside "
        "(checked: its largest component over seeds 0-999 is 0.99999998), so no bound of the clip is ever met",
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁpeg_bottom__mutmut_15":
        "> vs >= where the peg lies exactly level (its axis' z exactly 0): both ends at one height, measure zero",
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁdepth__mutmut_12":
        "< vs <= at exactly half the hole's side off its axis: measure zero for floats",
    "pixelrig.tasks.peg_insert.xǁPandaPegInsertEnvǁis_success__mutmut_3":
        ">= vs > at exactly the insertion depth: measure zero for floats",
    "pixelrig.tasks.reach.xǁPandaReachEnvǁbuild_task_objects__mutmut_26": _BUILT_THEN_PLACED,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁbuild_task_objects__mutmut_31": _BUILT_THEN_PLACED,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁbuild_task_objects__mutmut_36": _BUILT_THEN_PLACED,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁbuild_task_objects__mutmut_37": _BUILT_THEN_PLACED,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁbuild_task_objects__mutmut_38": _BUILT_THEN_PLACED,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁbuild_task_objects__mutmut_39": _BUILT_THEN_PLACED,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁbuild_task_objects__mutmut_34": _NO_SUCH_SHAPE,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁbuild_task_objects__mutmut_35": _NO_SUCH_SHAPE,
    "pixelrig.tasks.reach.xǁPandaReachEnvǁreset_task__mutmut_27": _NORMALISED_QUAT,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_13": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_17": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_18": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_19": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_20": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_48": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_53": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_58": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_59": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_60": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_61": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_56": _NO_SUCH_SHAPE,
    "pixelrig.tasks.push.xǁPandaPushEnvǁbuild_task_objects__mutmut_57": _NO_SUCH_SHAPE,
    "pixelrig.tasks.push.xǁPandaPushEnvǁ__init____mutmut_16": _DRAWN_AT_RESET,
    "pixelrig.tasks.push.xǁPandaPushEnvǁ__init____mutmut_17": _DRAWN_AT_RESET,
    "pixelrig.tasks.push.xǁPandaPushEnvǁ__init____mutmut_18": _DRAWN_AT_RESET,
    "pixelrig.tasks.push.xǁPandaPushEnvǁ__init____mutmut_19": _DRAWN_AT_RESET,
    "pixelrig.tasks.push.xǁPandaPushEnvǁ__init____mutmut_10": _GOAL_OBS_DEFAULT,
    "pixelrig.tasks.push.xǁPandaPushEnvǁ__init____mutmut_12": _GOAL_OBS_DEFAULT,
    "pixelrig.vector.autoreset.x_autoreset_enum__mutmut_1":
        "reached only on gymnasium 1.0 (no AutoresetMode), not the one mutmut runs on: CI's gym-range "
        "stage checks it there (tests/test_vector.py::test_gymnasium_1_0_refuses_every_mode_but_next_step)",
    "pixelrig.vector.autoreset.x_autoreset_name__mutmut_21":
        "reached only on gymnasium 1.0 (no AutoresetMode), not the one mutmut runs on: CI's gym-range "
        "stage checks it there (tests/test_vector.py::test_gymnasium_1_0_refuses_every_mode_but_next_step)",
    "pixelrig.vector.autoreset.x_autoreset_name__mutmut_22":
        "reached only on gymnasium 1.0 (no AutoresetMode), not the one mutmut runs on: CI's gym-range "
        "stage checks it there (tests/test_vector.py::test_gymnasium_1_0_refuses_every_mode_but_next_step)",
    "pixelrig.vector.autoreset.x_autoreset_name__mutmut_23":
        "reached only on gymnasium 1.0 (no AutoresetMode), not the one mutmut runs on: CI's gym-range "
        "stage checks it there (tests/test_vector.py::test_gymnasium_1_0_refuses_every_mode_but_next_step)",
    "pixelrig.vector.autoreset.x_autoreset_name__mutmut_24":
        "reached only on gymnasium 1.0 (no AutoresetMode), not the one mutmut runs on: CI's gym-range "
        "stage checks it there (tests/test_vector.py::test_gymnasium_1_0_refuses_every_mode_but_next_step)",
    "pixelrig.cameras.lens.x_pinhole_rays__mutmut_3":
        "k is float64 from lens_plan, and an integer or float32 K meets the float64 arange: promoted to float64, "
        "the same values",
    "pixelrig.cameras.lens.x_pinhole_rays__mutmut_5":
        "k is float64 from lens_plan, and an integer or float32 K meets the float64 arange: promoted to float64, "
        "the same values",
    "pixelrig.cameras.lens.x_pinhole_rays__mutmut_10":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values",
    "pixelrig.cameras.lens.x_pinhole_rays__mutmut_12":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values",
    "pixelrig.cameras.lens.x_pinhole_rays__mutmut_21":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values",
    "pixelrig.cameras.lens.x_pinhole_rays__mutmut_23":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_3":
        "k is float64 from lens_plan, and any real K's values reach OpenCV (which converts to double) and numpy's "
        "promotion unchanged",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_5":
        "k is float64 from lens_plan, and any real K's values reach OpenCV (which converts to double) and numpy's "
        "promotion unchanged",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_8":
        "distortion is handed to OpenCV, which converts any real dtype to double: the same values",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_10":
        "distortion is handed to OpenCV, which converts any real dtype to double: the same values",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_17":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values (np.stack with "
        "the float64 rows)",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_19":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values (np.stack with "
        "the float64 rows)",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_21":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values (np.stack with "
        "the float64 columns)",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_23":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values (np.stack with "
        "the float64 columns)",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_29": "stacking two 1-D arrays: axis=1 is axis=-1",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_33":
        "31 OpenCV iterations instead of 30: the Newton refinement then brings every pixel within 1e-9 px from "
        "OpenCV's start either way (tested with a lens OpenCV's default 5 iterations leave 20 px off): only rounding "
        "differs",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_34":
        "OpenCV stops once within ~1 px instead of 1e-12: the Newton refinement then brings every pixel within 1e-9 "
        "px from OpenCV's start either way (tested with a lens OpenCV's default 5 iterations leave 20 px off): only "
        "rounding differs",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_48":
        "the pinhole back is off its pixels wherever the lens distorts them, so this only makes the refinement run "
        "where OpenCV already converged (_refine stops at once, norm unchanged; back is then recomputed with the "
        "distortion); where it is within 1e-9 px the distortion is too, and so is the true residual",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_52":
        "'or': len(back) is never 0: cv2.undistortPoints returns None for an empty image (a TypeError before this "
        "line), so the guard's other branch is dead; with a pixel, it only makes the refinement run where OpenCV "
        "already converged; _refine then stops at once (its own < 1e-9 px test) and returns norm unchanged",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_55":
        "back + pix is never within 1e-9 of 0, so it only makes the refinement run where OpenCV already converged; "
        "_refine then stops at once (its own < 1e-9 px test) and returns norm unchanged",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_57":
        "> vs >= at a residual of exactly 1e-9 px: measure zero for floats",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_78":
        "'or True': len(back) is never 0: cv2.undistortPoints returns None for an empty image (a TypeError before "
        "this line), so the guard's other branch is dead",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_83":
        "the 0.0 -> 1.0 branch: len(back) is never 0: cv2.undistortPoints returns None for an empty image (a "
        "TypeError before this line), so the guard's other branch is dead",
    "pixelrig.cameras.lens.x_undistort_pixels__mutmut_85":
        "<= vs < at a residual of exactly INVERSION_TOL_PX: measure zero for floats",
    "pixelrig.cameras.lens.x__refine__mutmut_14":
        "max(initial=None) differs only on an empty array, and _refine is never handed one (undistort_pixels fails "
        "in OpenCV first on an empty image; the border is never empty)",
    "pixelrig.cameras.lens.x__refine__mutmut_16":
        "initial=1.0 never stops early: the remaining Newton steps from a converged point (f0 ~ 1e-13 px) move it by "
        "rounding only",
    "pixelrig.cameras.lens.x__refine__mutmut_17": "< vs <= at a residual of exactly 1e-9 px: measure zero for floats",
    "pixelrig.cameras.lens.x__refine__mutmut_54": "> vs >= at |det| exactly 1e-12: measure zero for floats",
    "pixelrig.cameras.lens.x__refine__mutmut_55":
        "det is in px^2 per normalised unit^2 (fx fy det J): >> 1 (~1e2 even 2% inside a fold, ~1e3 typically) for "
        "any pixel a real image can invert; only a focal length under ~1 px would bring it to (1e-12, 1]",
    "pixelrig.cameras.lens.x__refine__mutmut_63":
        "the filler det only serves pixels whose step np.where(ok, ...) then discards",
    "pixelrig.cameras.lens.x__refine__mutmut_96":
        "moves only pixels with |det| <= 1e-12, an exactly singular Jacobian, which no invertible pixel has (see "
        "mutmut_55)",
    "pixelrig.cameras.lens.xǁRemapǁdepth__mutmut_22":
        "the filler depth only serves pixels with an invalid tap, never smooth, whose interpolated value "
        "np.where(smooth, ...) discards",
    "pixelrig.cameras.lens.xǁRemapǁdepth__mutmut_35":
        "<= vs < at a cross difference of exactly PLANAR_TOL * mean: measure zero for floats (0.8 and 1.2 of the "
        "bound are tested)",
    "pixelrig.cameras.lens.xǁRemapǁdepth__mutmut_44":
        "<= vs < at a depth ratio of exactly 1 + EDGE_JUMP: measure zero for floats (1.08 and 1.12 are tested)",
    "pixelrig.cameras.lens.xǁRemapǁdepth__mutmut_57": "all taps equal tap 1 exactly when all equal tap 0",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_3":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values (np.stack with "
        "float64 zeros)",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_5":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values (np.stack with "
        "float64 zeros)",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_8":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values (np.stack with "
        "float64 zeros)",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_10":
        "an int64 arange promotes to float64 against the float64 operand it meets: the same values (np.stack with "
        "float64 zeros)",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_28":
        "the bottom row's ends stay in the side columns, and a radial model's fold set is outside an ellipse in "
        "pixels (the distorted radius is convex), so it reaches a corner before any other border pixel",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_45":
        "the right column's ends stay in the top and bottom rows, and a radial model's fold set is outside an "
        "ellipse in pixels (the distorted radius is convex), so it reaches a corner before any other border pixel",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_49":
        "k is float64 from lens_plan, and any real K's values reach OpenCV (which converts to double) and numpy's "
        "promotion unchanged",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_51":
        "k is float64 from lens_plan, and any real K's values reach OpenCV (which converts to double) and numpy's "
        "promotion unchanged",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_54":
        "distortion is handed to OpenCV, which converts any real dtype to double: the same values",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_56":
        "distortion is handed to OpenCV, which converts any real dtype to double: the same values",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_59":
        "31 OpenCV iterations instead of 30: the Newton refinement then brings every pixel within 1e-9 px from "
        "OpenCV's start either way (tested with a lens OpenCV's default 5 iterations leave 20 px off): only rounding "
        "differs",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_60":
        "OpenCV stops once within ~1 px instead of 1e-12: the Newton refinement then brings every pixel within 1e-9 "
        "px from OpenCV's start either way (tested with a lens OpenCV's default 5 iterations leave 20 px off): only "
        "rounding differs",
    "pixelrig.cameras.lens.x_check_invertible__mutmut_90":
        "<= vs < at a residual of exactly INVERSION_TOL_PX: measure zero for floats",
    "pixelrig.cameras.noise.xǁSensorNoiseǁ_key__mutmut_4":
        "the string standing for a NaN invalid is private to _key (only compared with another _key): any constant "
        "that no other field can hold works",
    "pixelrig.cameras.noise.xǁSensorNoiseǁ_key__mutmut_5":
        "the string standing for a NaN invalid is private to _key (only compared with another _key): any constant "
        "that no other field can hold works",
    "pixelrig.cameras.noise.xǁSensorNoiseǁ__hash____mutmut_1":
        "a constant hash keeps hash's contract (equal objects hash equal): only the speed of dicts and sets of "
        "noises differs",
    "pixelrig.cameras.noise.x_noisy_rgb__mutmut_3":
        "rgb is (H, W, 3) uint8 by contract (the rig's images are): np.array of it with dtype=None is uint8, the "
        "same values",
    "pixelrig.cameras.noise.x_noisy_rgb__mutmut_6":
        "rgb is (H, W, 3) uint8 by contract (the rig's images are): np.array of it without dtype is uint8, the same "
        "values",
    "pixelrig.cameras.noise.x_noisy_rgb__mutmut_7": "np.array copies by default: dropping copy=True changes nothing",
    "pixelrig.cameras.noise.x_noisy_rgb__mutmut_15": "astype(None) is astype(np.float64)",
    "pixelrig.cameras.noise.x_noisy_rgb__mutmut_46":
        "OpenCV picks the encoder by the extension case-insensitively: '.JPG' writes the same bytes",
    "pixelrig.cameras.noise.x_noisy_rgb__mutmut_52":
        "unreachable (pragma: no cover): cv2.imencode never returns False for a uint8 (H, W, 3) image",
    "pixelrig.cameras.noise.x_noisy_rgb__mutmut_53":
        "unreachable (pragma: no cover): cv2.imencode never returns False for a uint8 (H, W, 3) image",
    "pixelrig.cameras.noise.x_noisy_rgb__mutmut_54":
        "unreachable (pragma: no cover): cv2.imencode never returns False for a uint8 (H, W, 3) image",
    "pixelrig.cameras.noise.x_noisy_rgb__mutmut_55":
        "unreachable (pragma: no cover): cv2.imencode never returns False for a uint8 (H, W, 3) image",
    "pixelrig.cameras.noise.x_edge_pixels__mutmut_63": "slice(None, -1) is slice(0, -1)",
    "pixelrig.cameras.noise.x_edge_pixels__mutmut_65": "slice(-1) is slice(None, -1), which is slice(0, -1)",
    "pixelrig.cameras.noise.x_incidence_degrees__mutmut_76":
        "cos is an absolute value over a positive norm, never below 0: the lower clip never acts",
    "pixelrig.cameras.noise.x_noisy_depth__mutmut_36":
        "invalid is all False just before: '=' and '|=' give the same mask",
    "pixelrig.cameras.stereo.x__lattice__mutmut_33":
        "astype(None) is astype(float64): the same dtype and values",
    "pixelrig.cameras.stereo.x__lattice__mutmut_39":
        "int(0.35 * 65537) == int(0.35 * 65536) == 22937: the same threshold",
    "pixelrig.cameras.stereo.x_dot_pattern__mutmut_9":
        "depth keeps its own real dtype, and the first product with the float64 rays promotes it to float64 exactly "
        "(float32 -> float64 is exact): the same values",
    "pixelrig.cameras.stereo.x_dot_pattern__mutmut_11":
        "depth keeps its own real dtype, and the first product with the float64 rays promotes it to float64 exactly "
        "(float32 -> float64 is exact): the same values",
    "pixelrig.cameras.stereo.x_dot_pattern__mutmut_12":
        "the filler depth only serves pixels without a surface, whose dots np.where(hit, ...) then sets to 0",
    "pixelrig.cameras.stereo.x_infrared__mutmut_2":
        "astype(None) is astype(float64): the same dtype and values",
    "pixelrig.cameras.stereo.x_infrared__mutmut_8":
        "rgb[..., :4] is rgb[..., :3] for RGB, and for the RGBA the rig hands in, COLOR_RGB2GRAY takes 4 channels and "
        "ignores alpha: the same grey (tested with both)",
    "pixelrig.cameras.stereo.x_infrared__mutmut_11":
        "the sum is never negative (grey >= 0, dots in [0, 1]), so clipping from below changes nothing",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_2":
        "OpenCV reads None (and the missing argument) as minDisparity 0, the value given",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_13":
        "OpenCV reads None (and the missing argument) as minDisparity 0, the value given",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_7":
        "OpenCV reads None (and the missing argument) as disp12MaxDiff 0, and its SGBM takes any value <= 0 as 1 "
        "(stereosgbm.cpp: disp12MaxDiff > 0 ? disp12MaxDiff : 1), the value given",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_18":
        "OpenCV reads None (and the missing argument) as disp12MaxDiff 0, and its SGBM takes any value <= 0 as 1 "
        "(stereosgbm.cpp: disp12MaxDiff > 0 ? disp12MaxDiff : 1), the value given",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_12":
        "OpenCV reads None (and the missing argument) as mode 0, which is STEREO_SGBM_MODE_SGBM, the value given",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_23":
        "OpenCV reads None (and the missing argument) as mode 0, which is STEREO_SGBM_MODE_SGBM, the value given",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_38":
        "astype(None) is astype(float64) on SGBM's int16 disparities: the same values",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_47":
        "a disparity of exactly 0 then reads z = fx * baseline / 0 = inf, which fails z < far (inf < inf too): "
        "invalid either way",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_64":
        "the filler only serves pixels np.where(valid, ...) then discards",
    "pixelrig.cameras.stereo.x_sgbm_depth__mutmut_65":
        "the filler depth goes only to pixels already invalid, which valid &= keeps invalid and np.where(valid, ...) "
        "sets to 0",
    "pixelrig.cameras.sensors.xǁSensorTimelineǁobserve__mutmut_52":
        "a deque with maxlen latency + 1 keeps the last latency + 1 of latency + 2 equal pictures: the same deque",
    "pixelrig.control.gripper.x_couple_gripper__mutmut_26": _GEAR_AXIS,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_27": _GEAR_PIVOT,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_28": _GEAR_PIVOT,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_40": _GEAR_AXIS,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_41": _GEAR_AXIS,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_42": _GEAR_AXIS,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_43": _GEAR_PIVOT,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_44": _GEAR_PIVOT,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_45": _GEAR_PIVOT,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_46": _GEAR_PIVOT,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_47": _GEAR_PIVOT,
    "pixelrig.control.gripper.x_couple_gripper__mutmut_48": _GEAR_PIVOT,
    "pixelrig.control.gripper.xǁGripperǁ__init____mutmut_5": _GRIPPER_DTYPE,
    "pixelrig.control.gripper.xǁGripperǁ__init____mutmut_7": _GRIPPER_DTYPE,
    "pixelrig.control.gripper.xǁGripperǁ__init____mutmut_9": _GRIPPER_DTYPE,
    "pixelrig.control.gripper.xǁGripperǁ__init____mutmut_11": _GRIPPER_DTYPE,
    "pixelrig.tasks.lift.xǁPandaLiftEnvǁis_success__mutmut_1":
        "> vs >= at a rise of exactly 0.10 m: measure zero for floats (9.9 and 10.1 cm are tested)",
    "pixelrig.tasks.push.xǁPandaPushEnvǁreset_task__mutmut_50": _NORMALISED_QUAT,
    "pixelrig.tasks.push.xǁPandaPushEnvǁreset_task__mutmut_66":
        "(0, 0, 0, 2) is normalised by pybullet to (0, 0, 0, 1): the same orientation",
    "pixelrig.tasks.push.xǁPandaPushEnvǁreset_task__mutmut_65":
        "(0, 0, 1, 1) turns the target disc a quarter turn about its own axis: a one-colour disc drawn only, the "
        "same in every image, and its orientation is in no observation, goal or reward",
    "pixelrig.tasks.lift.xǁPandaLiftEnvǁbuild_task_objects__mutmut_9": _BUILT_THEN_PLACED,
    "pixelrig.tasks.lift.xǁPandaLiftEnvǁbuild_task_objects__mutmut_10": _BUILT_THEN_PLACED,
    "pixelrig.tasks.push.xǁPandaPushEnvǁreset_task__mutmut_24":
        "<= vs < at a cube-target distance of exactly 0.10 m: measure zero for floats",
    "pixelrig.experts.x_find_experts__mutmut_3":
        "iter_modules over the package's one folder gives ModuleInfo tuples with the same finder first, so "
        "they sort by name either way",
    "pixelrig.experts.x_find_experts__mutmut_5":
        "iter_modules over the package's one folder gives ModuleInfo tuples with the same finder first, so "
        "they sort by name either way",
    "pixelrig.experts.base.x_wrap__mutmut_3":
        "(angle - period / 2) % period is (angle + period / 2) % period: the two differ by one period",
    "pixelrig.experts.base.xǁExpertǁnear__mutmut_7":
        "<= vs < at a distance of exactly the tolerance: measure zero for floats (both sides are tested)",
    "pixelrig.experts.base.xǁExpertǁslow__mutmut_6":
        "<= vs < at a speed of exactly the threshold: measure zero for floats (both sides are tested)",
    "pixelrig.experts.base.xǁExpertǁmove__mutmut_7":
        "np.asarray without a dtype keeps goal's values, and subtracting the float64 ee_pos promotes them to "
        "float64: the same numbers",
    "pixelrig.experts.base.xǁExpertǁmove__mutmut_9":
        "np.asarray without a dtype keeps goal's values, and subtracting the float64 ee_pos promotes them to "
        "float64: the same numbers",
    "pixelrig.experts.base.xǁExpertǁmove__mutmut_15":
        "at norm == speed the step is scaled by speed / norm = 1: the same step",
    "pixelrig.experts.pick.xǁGraspExpertǁact__mutmut_18": "slice(None, 2) is slice(0, 2)",
    "pixelrig.experts.pick.xǁGraspExpertǁact__mutmut_20": "slice(2) is slice(None, 2), which is slice(0, 2)",
    "pixelrig.experts.pick.xǁGraspExpertǁact__mutmut_60": "slice(None, 2) is slice(0, 2)",
    "pixelrig.experts.pick.xǁGraspExpertǁact__mutmut_62": "slice(2) is slice(None, 2), which is slice(0, 2)",
    "pixelrig.experts.pick.xǁStackExpertǁarrive__mutmut_16":
        ">= vs > at A exactly 4 mm off to the side: measure zero for floats (4.1 and 3.9 mm are tested)",
    "pixelrig.experts.pick.xǁStackExpertǁarrive__mutmut_26":
        "<= vs < at A exactly 4 mm over its place: measure zero for floats (4.1 and 3.9 mm are tested)",
    "pixelrig.experts.pick.xǁStackExpertǁlet_go__mutmut_11":
        ">= vs > at an opening of exactly 7 cm: measure zero for floats (6.9 and 7.1 cm are tested)",
    "pixelrig.vector.stack.xǁFrameStackǁ__init____mutmut_40":
        "float zeros for the first restart flags: read only by .any() (False either way) or cleared by a reset "
        "before the first step replaces them with a bool array",
    "pixelrig.vector.stack.xǁFrameStackǁ__init____mutmut_42":
        "float zeros for the first restart flags: read only by .any() (False either way) or cleared by a reset "
        "before the first step replaces them with a bool array",
    "pixelrig.vector.stack.xǁFrameStackǁreset__mutmut_21":
        "None assigned into a bool array is False: the same restart flags",
    "pixelrig.vector.stack.xǁFrameStackǁreset__mutmut_35":
        "None assigned into a bool array is False: the same restart flags",
    "pixelrig.vector.batched.xǁEnvBatchǁset_attr__mutmut_3": _COUNTED_FIRST,
    "pixelrig.vector.batched.xǁEnvBatchǁset_attr__mutmut_6": _COUNTED_FIRST,
    "pixelrig.vector.batched.xǁEnvBatchǁset_attr__mutmut_7": _COUNTED_FIRST,
    "pixelrig.vector.batched.xǁEnvBatchǁstep__mutmut_28": _COUNTED_FIRST,
    "pixelrig.vector.batched.xǁEnvBatchǁreset__mutmut_7": _COUNTED_FIRST,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_ask_all__mutmut_5": _ONE_PER_SIDE,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_ask_all__mutmut_8": _ONE_PER_SIDE,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁstep__mutmut_30": _ONE_PER_SIDE,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁstep__mutmut_33": _ONE_PER_SIDE,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁstep__mutmut_34": _ONE_PER_SIDE,
    "pixelrig.vector.batched.xǁEnvBatchǁ_collect__mutmut_7": _ONE_PER_SIDE,
    "pixelrig.vector.batched.xǁEnvBatchǁ_collect__mutmut_10": _ONE_PER_SIDE,
    "pixelrig.vector.batched.xǁEnvBatchǁ_collect__mutmut_11": _ONE_PER_SIDE,
    "pixelrig.vector.batched.xǁEnvBatchǁreset__mutmut_21": (
        "None assigned into a bool array is False: the same autoreset flags"),
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_store__mutmut_2": (
        "every observation put into its env's slot instead of all concatenated: concatenate writes into the same "
        "preallocated batch and returns it, so the values and the array handed out are the same (copy=False "
        "tested); a local reset always has at least one observation (a mask resetting none is refused)"),
    "pixelrig.vector.batched.xǁEnvBatchǁ_submit__mutmut_10": (
        "submit() of no jobs instead of no pending part: it draws nothing and its collect() gives no frames, so "
        "_collect writes nothing either way"),
    "pixelrig.vector.batched.xǁEnvBatchǁ_collect__mutmut_4": (
        "break instead of continue after a part with nothing drawn: a part has nothing to draw only when its envs "
        "are not PixelObs envs, and make_vec makes every env of a vector env from one id and one rig, so then no "
        "part has anything to draw"),
    "pixelrig.vector.batched.xǁEnvBatchǁcall__mutmut_2": (
        "the branch for only=None taken for a list too: no caller passes None (BatchedVectorEnv.call_at hands its "
        "batch, here or in a worker, the list of indices it asked for), and for a list both branches are the same"),
    "pixelrig.vector.batched.xǁEnvBatchǁreset__mutmut_10": _COUNTED_FIRST,
    "pixelrig.vector.batched.xǁEnvBatchǁreset__mutmut_11": _COUNTED_FIRST,
    "pixelrig.vector.batched.xǁEnvBatchǁstep__mutmut_31": _COUNTED_FIRST,
    "pixelrig.vector.batched.xǁEnvBatchǁstep__mutmut_32": _COUNTED_FIRST,
    "pixelrig.vector.stack.xǁFrameStackǁstep__mutmut_15":
        "next-step's restart flags in disabled mode too: every env that ended is reset (a full reset or its "
        "reset_mask, both clear its flag) before the next step, which pixelrig's vector envs refuse and Gymnasium's "
        "assert otherwise",
    "pixelrig.vector.stack.xǁFrameStackǁstep__mutmut_19":
        "float zeros for no restart: read only by .any() (False either way) or cleared by a reset before the "
        "next step replaces them",
    "pixelrig.vector.stack.xǁFrameStackǁstep__mutmut_21":
        "float zeros for no restart: read only by .any() (False either way) or cleared by a reset before the "
        "next step replaces them",
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁset_attr__mutmut_15": _FATAL_TRUTH,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁcall_at__mutmut_33": _FATAL_TRUTH,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁcall_at__mutmut_47": _ONE_ANSWER_EACH,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁcall_at__mutmut_51": _ONE_ANSWER_EACH,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁcall_at__mutmut_52": _ONE_ANSWER_EACH,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁcall_at__mutmut_55": _ONE_ANSWER_EACH,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁcall_at__mutmut_58": _ONE_ANSWER_EACH,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁcall_at__mutmut_59": _ONE_ANSWER_EACH,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_start_workers__mutmut_39": _HELPER_WORDS,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_start_workers__mutmut_43":
        "wait=None instead of False: Helper.start reads wait only as a truth value (`if wait:`)",
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_start_workers__mutmut_58": _START_FAILED_UNSEEN,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_start_workers__mutmut_59": _START_FAILED_UNSEEN,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_start_workers__mutmut_60": _START_FAILED_UNSEEN,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ__init____mutmut_47": "create_empty_array's own default fn is np.zeros",
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_ask_all__mutmut_9": _ONE_PER_SIDE,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_ask_all__mutmut_11": _HELPER_WORDS,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_ask_all__mutmut_13": _HELPER_WORDS,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_ask_all__mutmut_16": _HELPER_WORDS,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁwrapper_names__mutmut_4": _FATAL_TRUTH,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁwrapper_names__mutmut_7": _NAMES_CANNOT_FAIL,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁwrapper_names__mutmut_13": _NAMES_CANNOT_FAIL,
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_dead_workers__mutmut_1":
        "waiting up to 3 s instead of 2 for a worker whose connection closed to be reaped: it is reaped in "
        "milliseconds, and the wait ends as soon as one has exited",
    "pixelrig.vector.batched.xǁBatchedVectorEnvǁ_dead_workers__mutmut_5":
        "dead_workers' own default wait is the same 2.0 s",
    "pixelrig.integrations.sb3.x_env_infos__mutmut_12":
        "the default mask as float ones instead of bools: np.flatnonzero gives every index either way",
    "pixelrig.integrations.sb3.x_env_infos__mutmut_14":
        "the default mask as float ones instead of bools: np.flatnonzero gives every index either way",
    "pixelrig.integrations.sb3.xǁPixelVecEnvǁ__init____mutmut_29":
        "the actions before the first step_async are never read: SB3's VecEnv.step calls step_async before "
        "step_wait",
    "pixelrig.integrations.sb3.xǁPixelVecEnvǁreset__mutmut_2":
        "seed=[None] * n instead of None: every vector env seeds each env with None either way (Gymnasium's "
        "SyncVectorEnv makes None that list itself)",
    "pixelrig.integrations.sb3.xǁPixelVecEnvǁstep_wait__mutmut_15":
        "the {} default for an ended env's missing final_info is never used: every same-step vector env (pixelrig's, "
        "Gymnasium's) adds final_info beside final_obs for each env that ended (an empty step info batches to an "
        "empty dict with its mask set)",
    "pixelrig.integrations.sb3.xǁPixelVecEnvǁstep_wait__mutmut_17":
        "the {} default for an ended env's missing final_info is never used: every same-step vector env (pixelrig's, "
        "Gymnasium's) adds final_info beside final_obs for each env that ended (an empty step info batches to an "
        "empty dict with its mask set)",
    "pixelrig.render.procedural.x_value_noise__mutmut_10":
        "the first octave's weight 2.0 instead of 1.0 doubles every weight and their sum alike (a power of two: "
        "exact in binary), so the normalised noise is bitwise the same",
    "pixelrig.render.procedural.x_procedural_image__mutmut_97":
        "the parity of a sum of two integers is the parity of their difference (floors of floats: exact integers)",
    "pixelrig.render.procedural.x_procedural_image__mutmut_140": "astype(None) is astype(np.float64)",
    "pixelrig.render.procedural.x_procedural_image__mutmut_144":
        "< vs <= at a stripe phase of exactly the drawn duty: measure zero for floats",
    "pixelrig.render.procedural.x_procedural_image__mutmut_178":
        "a float k instead of an int one: it is only compared with the stop index i (k == i), never indexes",
    "pixelrig.render.procedural.x__colors__mutmut_18":
        "< vs <= at a brightness gap of exactly 60.0 levels: measure zero for floats",
    "pixelrig.render.procedural.x__grid__mutmut_8": "astype(None) is astype(np.float64)",
    "pixelrig.render.procedural.x_procedural_image__mutmut_265":
        "every family is a convex mix of colours in [0, 255] (weights in [0, 1]), so np.rint never goes below 0 "
        "(a rounding -1e-13 rounds to -0.0, which is 0 as uint8): the clip's low bound never acts",
    "pixelrig.render.procedural.x_procedural_image__mutmut_266":
        "every family is a convex mix of colours in [0, 255] (weights in [0, 1]), so np.rint never goes above 255 "
        "(a rounding 255 + 1e-13 rounds to 255): the clip's high bound never acts",
    "pixelrig.render.procedural.x_procedural_image__mutmut_272":
        "every family is a convex mix of colours in [0, 255] (weights in [0, 1]), so np.rint never goes above 255: "
        "a high bound of 256 never acts either",
    "pixelrig.wrappers.background.xǁBackgroundǁimage__mutmut_10":
        "the frame of a source that is no video only enters the cache's key, where it is the same constant on every "
        "call (1 instead of 0): the same images made and found",
    "pixelrig.wrappers.background.x_read_video__mutmut_9":
        "imageio gives every frame of the video suffixes read (GIF through Pillow, the others through pyav or "
        "ffmpeg as rgb24) as uint8 already: np.asarray's dtype=np.uint8 changes nothing",
    "pixelrig.wrappers.background.x_read_video__mutmut_11":
        "imageio gives every frame of the video suffixes read (GIF through Pillow, the others through pyav or "
        "ffmpeg as rgb24) as uint8 already: np.asarray's dtype=np.uint8 changes nothing",
    "pixelrig.envs.looks.x_draw_lighting__mutmut_4":
        "ten uniforms instead of nine from the same stream: the first nine are the same numbers, and only they "
        "are read",
    "pixelrig.envs.looks.x_draw_lighting__mutmut_96":
        "< vs <= at a uniform of exactly the shadow probability: measure zero for floats (0 and 1 are tested)",
    "pixelrig.envs.looks.x_link_index__mutmut_7":
        "pybullet's body and link names are ASCII: the decode's error handler is never looked up, whatever its "
        "name",
    "pixelrig.envs.looks.x_link_index__mutmut_8":
        "pybullet's body and link names are ASCII: the decode's error handler is never looked up, whatever its "
        "name",
    "pixelrig.envs.looks.x_link_index__mutmut_25":
        "pybullet's body and link names are ASCII: the decode's error handler is never looked up, whatever its "
        "name",
    "pixelrig.envs.looks.x_link_index__mutmut_26":
        "pybullet's body and link names are ASCII: the decode's error handler is never looked up, whatever its "
        "name",
    "pixelrig.envs.looks.x_draw_distractors__mutmut_6":
        "the area's and workspace's corners only meet float64 arithmetic (footprints, uniform draws, the floor's "
        "height), which promotes any real dtype to the same float64 values",
    "pixelrig.envs.looks.x_draw_distractors__mutmut_8":
        "the area's and workspace's corners only meet float64 arithmetic (footprints, uniform draws, the floor's "
        "height), which promotes any real dtype to the same float64 values",
    "pixelrig.envs.looks.x_draw_distractors__mutmut_11":
        "the area's and workspace's corners only meet float64 arithmetic (footprints, uniform draws, the floor's "
        "height), which promotes any real dtype to the same float64 values",
    "pixelrig.envs.looks.x_draw_distractors__mutmut_13":
        "the area's and workspace's corners only meet float64 arithmetic (footprints, uniform draws, the floor's "
        "height), which promotes any real dtype to the same float64 values",
    "pixelrig.envs.looks.xǁEnvLooksǁworkspace_box__mutmut_41":
        "< vs <= at a body exactly 20.0 m wide: measure zero for floats (20.5 m and 19.4 m are tested)",
    "pixelrig.envs.looks.x__bounds__mutmut_23":
        "pybullet's rotation matrix is a tuple of Python floats: np.asarray makes it float64 with or without the dtype",
    "pixelrig.envs.looks.x__bounds__mutmut_25":
        "pybullet's rotation matrix is a tuple of Python floats: np.asarray makes it float64 with or without the dtype",
    "pixelrig.envs.looks.x_draw_distractors__mutmut_46":
        "< vs <= at a uniform of exactly 0.5: measure zero for floats",
    "pixelrig.envs.looks.x_draw_distractors__mutmut_140":
        "a kept-out footprint's z is never read: boxes overlap or not in x and y only (_Box.overlaps_xy)",
    "pixelrig.envs.looks.x_draw_distractors__mutmut_143":
        "a kept-out footprint's z is never read: boxes overlap or not in x and y only (_Box.overlaps_xy)",
    "pixelrig.envs.looks.x_make_distractor__mutmut_36":
        "a collision shape id of -2 is as invalid as -1: pybullet makes the body without a collision shape either way",
    "pixelrig.envs.looks.x_make_distractor__mutmut_39":
        "pybullet's createVisualShape returns a shape id for any mesh path (a missing or empty file too, checked), and "
        "loadURDF raises itself: the failure branch (vis < 0, body < 0) is never reached",
    "pixelrig.envs.looks.x_make_distractor__mutmut_59":
        "pybullet's createVisualShape returns a shape id for any mesh path (a missing or empty file too, checked), and "
        "loadURDF raises itself: the failure branch (vis < 0, body < 0) is never reached",
    "pixelrig.envs.looks.x_make_distractor__mutmut_60":
        "pybullet's createVisualShape returns a shape id for any mesh path (a missing or empty file too, checked), and "
        "loadURDF raises itself: the failure branch (vis < 0, body < 0) is never reached",
    "pixelrig.envs.looks.x_make_distractor__mutmut_63":
        "pybullet's createVisualShape returns a shape id for any mesh path (a missing or empty file too, checked), and "
        "loadURDF raises itself: the failure branch (vis < 0, body < 0) is never reached",
    "pixelrig.envs.looks.x_make_distractor__mutmut_93":
        "collision group 0 with mask 1 collides with nothing, as group 0 mask 0 does: a pair collides only when "
        "each one's group meets the other's mask, and group 0 meets no mask",
    "pixelrig.envs.looks.x__placement__mutmut_9":
        "1001 tries instead of 1000 before giving up: the same placement whenever one is found (the draws are the "
        "same in order), the same error otherwise; only the discarded generator's state differs",
    "pixelrig.envs.looks.x_texture_of__mutmut_12":
        "procedural_image's default size is (64, 64), which is (TEXTURE_SIZE, TEXTURE_SIZE) (its value is tested)",
    "pixelrig.envs.looks.x_check_looks__mutmut_2":
        "BulletEnv calls check_looks only when randomize is not None: the guard's other branch is dead",
    "pixelrig.envs.looks.x_check_looks__mutmut_1":
        "skipping the check at construction: BulletEnv then draws the first episode's looks at once (seed 0) "
        "whenever textures are set, and that draw refuses the same key with the same message (texture_targets)",
    "pixelrig.envs.looks.x_check_looks__mutmut_4":
        "skipping the check at construction: BulletEnv then draws the first episode's looks at once (seed 0) "
        "whenever textures are set, and that draw refuses the same key with the same message (texture_targets)",
    "pixelrig.tasks.stack.xǁPandaStackEnvǁlet_go_open__mutmut_1": _AT_THRESHOLD,
    "pixelrig.envs.manipulation.x_body_still__mutmut_9": _AT_THRESHOLD,
    "pixelrig.envs.manipulation.x_body_still__mutmut_11": _AT_THRESHOLD,
    "pixelrig.envs.manipulation.xǁStackGoalǁon_b__mutmut_10": _AT_THRESHOLD,
    "pixelrig.envs.manipulation.xǁStackGoalǁon_b__mutmut_13": _AT_THRESHOLD,
    "pixelrig.envs.manipulation.xǁStackGoalǁreleased__mutmut_13": _AT_THRESHOLD,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁis_success__mutmut_1": _AT_THRESHOLD,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁreset_task__mutmut_17": _AT_THRESHOLD,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁreset_task__mutmut_34": _AT_THRESHOLD,
    "pixelrig.envs.manipulation.x_body_values__mutmut_16": _QUAT_CLIP,
    "pixelrig.envs.manipulation.x_body_values__mutmut_17": _QUAT_CLIP,
    "pixelrig.envs.manipulation.x_body_values__mutmut_22": _QUAT_CLIP,
    "pixelrig.envs.manipulation.x_body_values__mutmut_23": _QUAT_CLIP,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁterm_values__mutmut_24": _QUAT_CLIP,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁterm_values__mutmut_25": _QUAT_CLIP,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁterm_values__mutmut_31": _QUAT_CLIP,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁterm_values__mutmut_32": _QUAT_CLIP,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁload_cube__mutmut_11": _BUILT_THEN_PLACED,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁ__init____mutmut_2": _BUILT_THEN_PLACED,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁbuild_task_objects__mutmut_30": _BUILT_THEN_PLACED,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁbuild_task_objects__mutmut_35": _BUILT_THEN_PLACED,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁbuild_task_objects__mutmut_38": _NO_SUCH_SHAPE,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁbuild_task_objects__mutmut_39": _NO_SUCH_SHAPE,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁreset_task__mutmut_1": _OPTIONS_UNREAD,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁreset_task__mutmut_53": _NORMALISED_QUAT,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁgrasp_centre__mutmut_8": _FK_CURRENT,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁgrasp_centre__mutmut_10": _FK_CURRENT,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁreward__mutmut_3": _SUCCESS_AGAIN,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁevaluate__mutmut_3": _SUCCESS_AGAIN,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁreset_info__mutmut_2": (
        "is_success instead of goal_success at reset, under goal_obs: no reset starts a task done (the cube is drawn "
        "at least target_separation from the target, the stacking cubes apart on the table, the lifted cube resting), "
        "so both are False"),
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁfinger_contacts__mutmut_6": (
        "contacts with the body as pybullet's body B, from any body A: the robot is loaded before every body it can "
        "touch, so pybullet reports it as body A in those contacts, and no other body has links numbered as the "
        "fingers (the table and cubes have only their base, -1): the same finger links"),
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁdefault_cameras__mutmut_23": _CAMERA_SIZE,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁdefault_cameras__mutmut_24": _CAMERA_SIZE,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁdefault_cameras__mutmut_54": _CAMERA_SIZE,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁdefault_cameras__mutmut_55": _CAMERA_SIZE,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁdefault_cameras__mutmut_25": _NEAR_ROUNDING,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁdefault_cameras__mutmut_56": _NEAR_ROUNDING,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁdefault_cameras__mutmut_26": _FRONT_FAR,
    "pixelrig.envs.manipulation.xǁPandaManipulationEnvǁdefault_cameras__mutmut_40": _FRONT_FAR,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁreset_task__mutmut_50": _SPHERE_TURNED,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁreset_task__mutmut_51": _SPHERE_TURNED,
    "pixelrig.envs.manipulation.xǁPickPlaceGoalǁreset_task__mutmut_52": _SPHERE_TURNED,
    "pixelrig.tasks.cartpole.xǁCartPoleEnvǁ__init____mutmut_14": _BOX_DEFAULTS,
    "pixelrig.tasks.cartpole.xǁCartPoleEnvǁ__init____mutmut_19": _BOX_DEFAULTS,
    "pixelrig.tasks.cartpole.xǁCartPoleEnvǁbuild_world__mutmut_56": _MULTIBODY_DAMPING,
    "pixelrig.tasks.cartpole.xǁCartPoleEnvǁbuild_world__mutmut_57": _MULTIBODY_DAMPING,
    "pixelrig.tasks.cartpole.xǁCartPoleEnvǁevaluate__mutmut_16": _EXACT_BOUND,
    "pixelrig.tasks.x_declared__mutmut_5": _SYNTAX_FILENAME,
    "pixelrig.control.task_space.x_capped__mutmut_5": _NONEMPTY_STEP,
    "pixelrig.control.task_space.x_capped__mutmut_7": _NONEMPTY_STEP,
    "pixelrig.control.task_space.x_capped__mutmut_10": _NONEMPTY_STEP,
    "pixelrig.control.task_space.x_capped__mutmut_14":
        "a step divided by a ratio of exactly 1.0 is the same step, bit for bit",
    "pixelrig.control.task_space.x_joint_step__mutmut_21": _AT_THRESHOLD,
    "pixelrig.control.task_space.x_joint_step__mutmut_22": _AT_THRESHOLD,
    "pixelrig.control.task_space.x_hold_near__mutmut_13": _AT_THRESHOLD,
    "pixelrig.control.task_space.x_hold_near__mutmut_36": _AT_THRESHOLD,
    "pixelrig.control.task_space.x_pose_error__mutmut_15": _AT_THRESHOLD,
    "pixelrig.control.task_space.x_reach_box__mutmut_31": _FK_CURRENT,
    "pixelrig.control.task_space.x_reach_box__mutmut_33": _FK_CURRENT,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁmeasure__mutmut_16": _FK_CURRENT,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁmeasure__mutmut_18": _FK_CURRENT,
    "pixelrig.control.task_space.x_reach_box__mutmut_60":
        "a prismatic joint whose upper limit equals its lower one adds a travel of 0 either way",
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁmeasure__mutmut_41":
        "the axes are read only in the pitch-and-roll mode, which sets them: '' and None are never read",
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁjoint_targets__mutmut_47": _ZERO_PULL,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁjoint_targets__mutmut_49": _ZERO_PULL,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁnext_target__mutmut_30":
        "action[3:7] of the arm's 6 numbers is action[3:6]: a slice stops at the end",
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁ__init____mutmut_5": _FLOAT_CORNERS,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁ__init____mutmut_7": _FLOAT_CORNERS,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁ__init____mutmut_11": _FLOAT_CORNERS,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁ__init____mutmut_13": _FLOAT_CORNERS,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁ__init____mutmut_19": (
        "pybullet's Jacobian depends on the joint positions only: the velocities and accelerations calculateJacobian "
        "takes (ones instead of zeros) change nothing (checked: the kuka's Jacobian bit-identical)"),
    "pixelrig.control.task_space.x_arm_chain__mutmut_46": _UTF8_NAMES,
    "pixelrig.control.task_space.x_arm_chain__mutmut_47": _UTF8_NAMES,
    "pixelrig.control.task_space.x_arm_chain__mutmut_53": _UTF8_NAMES,
    "pixelrig.control.task_space.x_arm_chain__mutmut_54": _UTF8_NAMES,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁmeasure__mutmut_52": _FK_CURRENT,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁmeasure__mutmut_54": _FK_CURRENT,
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁmeasure__mutmut_69": (
        "zip of the frames pybullet gives for the two joints and those joints: always of one length, so strict "
        "never acts"),
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁmeasure__mutmut_72": (
        "zip of the frames pybullet gives for the two joints and those joints: always of one length, so strict "
        "never acts"),
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁmeasure__mutmut_73": (
        "zip of the frames pybullet gives for the two joints and those joints: always of one length, so strict "
        "never acts"),
    "pixelrig.control.task_space.xǁTaskSpaceControllerǁmeasure__mutmut_21": (
        "the early return is a shortcut: without an offset and outside the pitch-and-roll mode the full path adds no "
        "offset and sets no axes, so it gives the same Measured"),
    "pixelrig.control.task_space.x_arm_chain__mutmut_49": (
        "the base's index is only read when the base is named as the end effector, and chain_to ends at any "
        "negative link: -2 gives the same empty path, refused with the same message (tested)"),
    "pixelrig.datasets.collect.x__env_kwargs__mutmut_26": (
        "the refusal of workers > 1 where os.name is not 'posix' (pragma: no cover) is never reached on the POSIX "
        "systems the tests and CI run on: no run here can tell its message from another"),
}
"""Mutants (mutmut's names) that change no behaviour, each with the reason; they leave the kill rate's denominator."""

KILLED = {1, 3, 36, 24, -24, 152, 255, -11}  # mutmut's exit codes: failed tests, pytest's internal error, timeouts,
# and SIGSEGV: the mutant crashed the test process (a None or a missing link handed to pybullet's C API)
SURVIVED = {0}
NO_TESTS = {5, 33}


def config(group: Group) -> str:
    """The ``[tool.mutmut]`` table for ``group``."""
    lines = ["", "[tool.mutmut]", 'source_paths = ["pixelrig"]',
             f"only_mutate = {json.dumps(list(group.modules))}",
             f"pytest_add_cli_args_test_selection = {json.dumps(list(group.tests))}",
             # tests/mutation_scope.py: a module-scoped fixture's work counts for every test that uses it
             'pytest_add_cli_args = ["-p", "no:cacheprovider", "-p", "tests.mutation_scope", '
             '"-o", "addopts=-m \'not slow\'"]',
             'also_copy = ["README.md", "docs/", "golden/", "examples/", "benchmarks/", "scripts/", "Makefile"]',
             'process_isolation = "forkserver"',  # a fork of a process that made a GL context hangs in it
             'forkserver_warmup = "collect"', ""]
    return "\n".join(lines)


def results(tree: Path, group: Group) -> dict[str, dict[str, int | None]]:
    """{module: {mutant name: exit code}} read from mutmut's ``.meta`` files."""
    out = {}
    for module in group.modules:
        meta = tree / "mutants" / (module + ".meta")
        data = json.loads(meta.read_text()) if meta.exists() else {"exit_code_by_key": {}}
        out[module] = data["exit_code_by_key"]
    return out


def write_results(tree: Path, codes: dict[str, dict[str, int | None]]) -> None:
    """Write ``{module: {mutant name: exit code}}`` into mutmut's ``.meta`` files (their other fields kept)."""
    for module, by_name in codes.items():
        meta = tree / "mutants" / (module + ".meta")
        data = json.loads(meta.read_text()) if meta.exists() else {}
        data["exit_code_by_key"] = by_name
        meta.write_text(json.dumps(data, indent=4))


def summarise(codes: dict[str, int | None], seconds: float) -> dict:
    """One module's row: counts by outcome and the kill rate over the non-equivalent mutants."""
    # a mutant a test kills changes behaviour: an EQUIVALENT entry naming one is stale (mutmut numbers mutants by
    # position, so a changed function renames them); it counts as killed and the row names it, to be removed
    stale = sorted(n for n, c in codes.items() if n in EQUIVALENT and c in KILLED)
    equivalent = sorted(n for n in codes if n in EQUIVALENT and n not in stale)
    live = {n: c for n, c in codes.items() if n not in equivalent}
    killed = sorted(n for n, c in live.items() if c in KILLED)
    survived = sorted(n for n, c in live.items() if c in SURVIVED)
    no_tests = sorted(n for n, c in live.items() if c in NO_TESTS)
    other = sorted(n for n, c in live.items() if c not in KILLED | SURVIVED | NO_TESTS)
    counted = len(killed) + len(survived) + len(no_tests)
    return {"mutants": len(codes), "killed": len(killed), "survived": len(survived), "no_tests": len(no_tests),
            "not_run": len(other), "equivalent": len(equivalent),
            "kill_rate": round(100.0 * len(killed) / counted, 1) if counted else None,
            "seconds": round(seconds), "survivors": survived + no_tests, "not_run_names": other,
            "stale_equivalent": stale}


class Stopped(Exception):
    """SIGTERM reached the driver during a run: the results so far are written as a partial row."""


def _stop(signum: int, frame: object) -> None:
    raise Stopped()


def run_group(name: str, group: Group, children: int, keep: Path | None, resume: bool = False,
              before: dict[str, dict] | None = None) -> dict[str, dict]:
    """Run mutmut over one group in a copy of the tree; its modules' rows. With ``resume`` (and ``keep``), go on in
    the kept tree: mutmut runs only the mutants without a result, and the time adds to ``before``'s rows'. SIGTERM
    stops the run, and the results so far make "partial" rows (the mutants not run named), to resume later.

    Raises:
        SystemExit: ``resume`` without a kept tree, or a mutated module has changed since it was made.
    """
    work = Path(tempfile.mkdtemp(prefix=f"pixelrig-mutation-{name}-")) if keep is None else keep / name
    tree = work
    if resume:
        check_kept(name, group, tree, keep)
    else:
        if work.exists():
            shutil.rmtree(work)
        copy_tree(tree, tracked_files())
        with open(tree / "pyproject.toml", "a") as f:
            f.write(config(group))
    earlier = sum((before or {}).get(m, {}).get("seconds", 0) for m in group.modules) if resume else 0
    seconds = run_mutmut(tree, children, (), f"on group {name!r}") + earlier
    codes = results(tree, group)
    total = sum(len(c) for c in codes.values()) or 1
    rows = {m: {"group": name, **summarise(c, seconds * len(c) / total)} for m, c in codes.items()}
    for row in rows.values():  # nothing left to work through: the run is final
        row["run"] = "partial" if row["not_run_names"] else \
            "final" if not row["survivors"] else "first"
    if keep is None:
        shutil.rmtree(work, ignore_errors=True)
    return rows


def run_mutmut(tree: Path, children: int, names: Sequence[str], what: str) -> float:
    """``mutmut run`` in ``tree`` (only ``names``, if any), with Hypothesis's mutation profile; its seconds. SIGTERM
    stops it: mutmut, its fork server and the mutants' test processes are killed, and the results written so far
    stay in the tree.

    Raises:
        RuntimeError: mutmut failed (``what`` says where), with the end of its output.
    """
    env = {**os.environ, "HYPOTHESIS_PROFILE": "mutation", "PYTHONPATH": ""}
    command = [str(Path(sys.executable).with_name("mutmut")), "run", "--max-children", str(children), *names]
    start = time.monotonic()
    stopped = False
    previous = signal.signal(signal.SIGTERM, _stop)
    proc = subprocess.Popen(command, cwd=tree, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True)
    try:
        output, _ = proc.communicate()
    except Stopped:
        stopped = True
        os.killpg(proc.pid, signal.SIGKILL)
        output, _ = proc.communicate()
    finally:
        signal.signal(signal.SIGTERM, previous)
    if proc.returncode != 0 and not stopped:
        tail = re.sub(r"[^\n]*\r", "", output)[-3000:]
        raise RuntimeError(f"mutmut failed {what} (exit status {proc.returncode}):\n{tail}")
    return time.monotonic() - start


def check_kept(name: str, group: Group, tree: Path, keep: Path | None) -> None:
    """Refuse to go on in a kept tree that is missing or whose mutated modules have changed since it was made."""
    if not (tree / "mutants").is_dir():
        raise SystemExit(f"{name}: no kept tree at {tree}; run the group with --keep {keep} first")
    changed = [m for m in group.modules if (tree / m).read_bytes() != (ROOT / m).read_bytes()]
    if changed:
        raise SystemExit(f"{name}: {changed} changed since {tree} was made: run the group again")


def rerun_group(name: str, group: Group, children: int, keep: Path, before: dict[str, dict]) -> dict[str, dict]:
    """Run the survivors of a group's kept tree (``keep/name``, from ``--keep``) again against today's tests and
    today's other modules; rows labelled "re-run", their time the first run's plus this one's.

    Raises:
        SystemExit: no kept tree, or a mutated module has changed since it was made (its mutants are stale: run
            the group again).
    """
    tree = keep / name
    check_kept(name, group, tree, keep)
    # the golden files too: a test added since may compare against a golden added with it
    files = [f for f in tracked_files()
             if f not in group.modules and f.split("/")[0] in ("pixelrig", "tests", "golden")]
    copy_tree(tree, files)
    copy_tree(tree / "mutants", files)
    kept = results(tree, group)
    if any(codes for codes in kept.values()) and all(c is None for codes in kept.values() for c in codes.values()):
        raise SystemExit(f"--rerun {name}: {tree} holds mutants but no results (mutmut made them again): run the "
                         "group again")
    names = [n for codes in kept.values() for n, c in codes.items()
             if n not in EQUIVALENT and c in SURVIVED | NO_TESTS]
    # Today's test selection, so that tests added to the group since run too (a selection only grows: what a test
    # killed stays killed). A changed [tool.mutmut] table makes mutmut make its mutants again, under the same names
    # (the modules are unchanged), and forget their results: the kept ones are merged back below.
    pyproject = (ROOT / "pyproject.toml").read_text() + config(group)
    if (tree / "pyproject.toml").read_text() != pyproject:
        (tree / "pyproject.toml").write_text(pyproject)
    # mutmut maps each function to the tests that ran it once, by test name: a test that now runs more (changed since)
    # would not be run against the new functions' mutants. Without the map, mutmut makes it again from today's tests.
    (tree / "mutants" / "mutmut-stats.json").unlink(missing_ok=True)
    seconds = run_mutmut(tree, children, names, f"re-running group {name!r}") if names else 0.0
    now = results(tree, group)
    codes = {m: {n: c if now[m].get(n) is None else now[m][n] for n, c in kept[m].items()} for m in kept}
    write_results(tree, codes)  # the tree holds every result again, for the next --rerun
    total = sum(len(c) for c in codes.values()) or 1
    rows = {m: {"group": name, **summarise(c, before.get(m, {}).get("seconds", 0) + seconds * len(c) / total)}
            for m, c in codes.items()}
    for row in rows.values():  # survivors re-run in a stopped run: still partial (--resume goes on with the rest)
        row["run"] = "partial" if row["not_run_names"] else "re-run"
    return rows


def table(rows: dict[str, dict]) -> str:
    """The markdown table of docs/mutation.md."""
    head = ("| module | group | run | mutants | killed | survived | no test reaches | not run | equivalent | kill rate "
            "| time |\n|---|---|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for module, r in sorted(rows.items()):
        rate = "-" if r["kill_rate"] is None else f"{r['kill_rate']:.1f}%"
        lines.append(f"| `{module}` | {r['group']} | {r.get('run', 'final')} | {r['mutants']} | {r['killed']} | "
                     f"{r['survived']} | {r['no_tests']} | {r.get('not_run', 0)} | {r['equivalent']} | {rate} | "
                     f"{r['seconds'] // 60} min {r['seconds'] % 60} s |")
    return "\n".join(lines)


def write(rows: dict[str, dict]) -> None:
    RESULTS.write_text(json.dumps(rows, indent=1, sort_keys=True) + "\n")
    text = PAGE.read_text()
    start, end = text.index(TABLE_START) + len(TABLE_START), text.index(TABLE_END)
    PAGE.write_text(text[:start] + "\n" + table(rows) + "\n" + text[end:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("groups", nargs="*", help="group names (default: all)")
    parser.add_argument("--list", action="store_true", help="list the groups")
    parser.add_argument("--children", type=int, default=2, help="mutmut's parallel workers (default 2)")
    parser.add_argument("--keep", type=Path, help="keep mutmut's trees under this folder (one per group)")
    parser.add_argument("--rerun", action="store_true",
                        help="with --keep: run the kept trees' survivors again against today's tests")
    parser.add_argument("--resume", action="store_true",
                        help="with --keep: go on with the kept trees' mutants not run yet (after a stopped run)")
    args = parser.parse_args(argv)
    unknown = [g for g in args.groups if g not in GROUPS]
    if unknown:
        parser.error(f"unknown groups {unknown}; groups: {list(GROUPS)}")
    if args.list:
        for name, g in GROUPS.items():
            print(f"{name}: {', '.join(g.modules)}\n    tests: {', '.join(g.tests)}")
        return 0
    rows = json.loads(RESULTS.read_text()) if RESULTS.exists() else {}
    for name in args.groups or list(GROUPS):
        group = GROUPS[name]
        print(f"== {name}: {', '.join(group.modules)}", flush=True)
        if (args.rerun or args.resume) and args.keep is None:
            parser.error("--rerun and --resume need --keep (the folder of the kept trees)")
        new = rerun_group(name, group, args.children, args.keep, rows) if args.rerun else \
            run_group(name, group, args.children, args.keep, args.resume, rows)
        for module, r in new.items():
            rows[module] = r
            print(f"   {module}: {r['killed']}/{r['mutants']} killed, {r['survived']} survived, "
                  f"{r['no_tests']} without tests, {r['equivalent']} equivalent: {r['kill_rate']}% "
                  f"({r['seconds']} s)", flush=True)
            for s in r["survivors"]:
                print(f"     survived: {s}")
            for s in r["stale_equivalent"]:
                print(f"     killed, yet in EQUIVALENT (remove the entry): {s}")
        write(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())

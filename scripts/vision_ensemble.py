"""Merge several exported tile classifiers into one ONNX classifier that averages them.

    python scripts/vision_ensemble.py OUT.onnx MEMBER.onnx MEMBER.onnx ...

Classifiers trained alike from different seeds misread different tiles of a design they never
saw, so their mean reads unseen designs better than any one of them (docs/vision.md). The
merged file keeps the members' input and output (``image`` → ``output``, N × 29), so the run
time loads it as it loads one classifier:

- the 28 class scores: each member's softmax, averaged over the members, then the log, so the
  run time's softmax gives back the mean probability (a mean of calibrated members);
- the 29th output, the upright logit: the members' mean.

Needs the training extras (onnx); never needed at run time.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import onnx
from onnx import TensorProto, compose, helper

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vision.classes import NUM_CLASSES  # noqa: E402


def _int64(name: str, value: int) -> onnx.TensorProto:
    return helper.make_tensor(name, TensorProto.INT64, [1], [value])


def merge_classifiers(members: list[Path]) -> onnx.ModelProto:
    """One model whose class probabilities and upright logit are the members' means.

    Each member's nodes and weights get their own prefix; all read the same ``image`` input.
    """
    if not members:
        raise ValueError("an ensemble needs at least one member")
    first = onnx.load(str(members[0]))
    nodes: list[onnx.NodeProto] = []
    weights: list[onnx.TensorProto] = [
        _int64("ensemble_zero", 0),
        _int64("ensemble_classes", NUM_CLASSES),
        _int64("ensemble_upright_end", NUM_CLASSES + 1),
        _int64("ensemble_axis", 1),
        helper.make_tensor("ensemble_share", TensorProto.FLOAT, [], [1.0 / len(members)]),
    ]
    probabilities, upright = [], []
    for index, path in enumerate(members):
        member = compose.add_prefix(onnx.load(str(path)), f"member{index}_", rename_inputs=False)
        (value,) = member.graph.output
        width = value.type.tensor_type.shape.dim[1].dim_value
        if width != NUM_CLASSES + 1:
            raise ValueError(f"{path} gives {width} outputs, not a classifier's {NUM_CLASSES + 1}")
        output = value.name
        nodes += member.graph.node
        weights += member.graph.initializer
        scores, upright_logit, probability = (f"ensemble_{what}{index}" for what in ("scores", "upright", "p"))
        nodes += [
            helper.make_node("Slice", [output, "ensemble_zero", "ensemble_classes", "ensemble_axis"], [scores]),
            helper.make_node(
                "Slice", [output, "ensemble_classes", "ensemble_upright_end", "ensemble_axis"], [upright_logit]
            ),
            helper.make_node("Softmax", [scores], [probability], axis=1),
        ]
        probabilities.append(probability)
        upright.append(upright_logit)
    nodes += [
        helper.make_node("Sum", probabilities, ["ensemble_p_sum"]),
        helper.make_node("Mul", ["ensemble_p_sum", "ensemble_share"], ["ensemble_p_mean"]),
        helper.make_node("Log", ["ensemble_p_mean"], ["ensemble_log_p"]),
        helper.make_node("Sum", upright, ["ensemble_upright_sum"]),
        helper.make_node("Mul", ["ensemble_upright_sum", "ensemble_share"], ["ensemble_upright_mean"]),
        helper.make_node("Concat", ["ensemble_log_p", "ensemble_upright_mean"], ["output"], axis=1),
    ]
    graph = helper.make_graph(nodes, "classifier_ensemble", list(first.graph.input), list(first.graph.output), weights)
    model = helper.make_model(graph, opset_imports=first.opset_import)
    onnx.checker.check_model(model)
    return model


def write_ensemble(out: Path, members: list[Path]) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(merge_classifiers(members), str(out))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.2f} MB) from {len(members)} classifiers")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="the merged classifier to write")
    parser.add_argument("members", type=Path, nargs="+", help="exported classifiers (train_vision.py classifier)")
    args = parser.parse_args(argv)
    missing = [str(path) for path in args.members if not path.is_file()]
    if missing:
        parser.error(f"no such classifier: {', '.join(missing)}")
    try:
        write_ensemble(args.out, args.members)
    except ValueError as error:
        parser.error(str(error))
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Exports a PyTorch attention layer as an attnstep lesson: its W_Q, W_K, W_V, W_O, its biases
b_Q, b_K, b_V, b_O (when the layer has them) and the layer's input as .npy files, and a lesson
that loads them, so attnstep steps through the real layer cell by cell.

    export_torch_layer.py --model MODEL.pt [--layer NAME] --input X.npy --tokens "a b c" --out DIR
    export_torch_layer.py --demo --out DIR

MODEL.pt is a whole module saved with torch.save (an nn.MultiheadAttention, or a model whose
attention layer --layer names, e.g. "encoder.layers.0.self_attn"); X.npy is the layer's input
for one sentence, shape (tokens, embed_dim). --demo builds a seeded float64 layer and input.

attnstep computes Q = input · W_Q (tokens are rows), PyTorch q = x · Wᵀ: so each W written is
the transpose of PyTorch's weight. PyTorch splits heads by contiguous columns, as attnstep does.
in_proj_bias is split into b_Q, b_K, b_V (its thirds) and out_proj.bias is b_O: attnstep adds
each to every row of Q, K, V and output, as PyTorch's linear layers do. attnstep shows the
layer as in eval() mode: attention dropout is not applied. add_bias_kv and add_zero_attn are
refused (an extra key and value that attnstep's stages do not have).
A --layer that names no module is refused with the nearest name and the model's attention
layers (or, without any, its layers). Needs python3-torch and python3-numpy. Exit status: 0
written, 64 bad arguments (a --layer the model lacks among them), 65 a layer attnstep cannot
show, 66 an unreadable model or input."""
import argparse
import difflib
import os
import sys

try:
    import numpy as np
    import torch
except ImportError as missing:
    sys.exit(f"export_torch_layer: {missing.name} is missing; install python3-torch and "
             "python3-numpy (Debian) first")

EXIT_USAGE, EXIT_DATA, EXIT_NO_INPUT = 64, 65, 66


class Refused(Exception):
    """A layer attnstep cannot show as it is; the message says why and what to do."""


def projections(layer):
    """PyTorch's W_q, W_k, W_v (each embed_dim × embed_dim, out × in) and W_o."""
    e = layer.embed_dim
    if layer._qkv_same_embed_dim:
        w = layer.in_proj_weight
        w_q, w_k, w_v = w[:e], w[e:2 * e], w[2 * e:]
    else:
        w_q, w_k, w_v = layer.q_proj_weight, layer.k_proj_weight, layer.v_proj_weight
        if w_k.shape[1] != e or w_v.shape[1] != e:
            raise Refused("the layer's keys and values come from inputs of another width "
                          "(kdim/vdim); attnstep's self-attention uses one width")
    return w_q, w_k, w_v, layer.out_proj.weight


def biases(layer):
    """PyTorch's b_q, b_k, b_v (the thirds of in_proj_bias) and b_o, or None for each the layer
    has not (a layer built with bias=False)."""
    e, b = layer.embed_dim, layer.in_proj_bias
    b_q, b_k, b_v = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
    return b_q, b_k, b_v, layer.out_proj.bias


def check_layer(layer):
    if not isinstance(layer, torch.nn.MultiheadAttention):
        raise Refused(f"the layer is a {type(layer).__name__}, not an nn.MultiheadAttention")
    if layer.bias_k is not None or layer.bias_v is not None:
        raise Refused("the layer has add_bias_kv=True: an extra key and value attnstep does "
                      "not show")
    if layer.add_zero_attn:
        raise Refused("the layer has add_zero_attn=True: an extra zero key attnstep does not "
                      "show")


def quoted(text):
    """text as a YAML double-quoted scalar (attnstep's loader refuses control characters)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def lesson_text(title, tokens, heads, files):
    lines = [f"# Written by tools/export_torch_layer.py: a PyTorch nn.MultiheadAttention's own",
             "# weights (transposed: attnstep multiplies row vectors from the left) and input.",
             f"title: {quoted(title)}", f"tokens: [{', '.join(map(quoted, tokens))}]",
             f"heads: {heads}"]
    lines += [f"{name}: {{file: {file}}}" for name, file in files]
    return "\n".join(lines) + "\n"


def export(layer, x, tokens, out_dir, title="a PyTorch attention layer"):
    """Writes embeddings.npy, W_Q.npy, W_K.npy, W_V.npy, W_O.npy and lesson.yaml into out_dir
    for the layer and its input x (tokens × embed_dim); returns the lesson's path."""
    check_layer(layer)
    x = np.asarray(x, dtype=np.float64)
    if x.ndim == 3 and 1 in x.shape[:2]:
        x = x.reshape(-1, x.shape[-1])   # one sentence of a batch
    if x.ndim != 2 or x.shape[1] != layer.embed_dim:
        raise Refused(f"the input has shape {x.shape}; the layer needs (tokens, "
                      f"{layer.embed_dim})")
    if len(tokens) != x.shape[0]:
        raise Refused(f"{len(tokens)} tokens given for an input of {x.shape[0]} rows")
    os.makedirs(out_dir, exist_ok=True)
    files = [("embeddings", "embeddings.npy")]
    np.save(os.path.join(out_dir, "embeddings.npy"), x)
    for name, weight in zip(("W_Q", "W_K", "W_V", "W_O"), projections(layer)):
        matrix = weight.detach().to(torch.float64).numpy().T
        np.save(os.path.join(out_dir, f"{name}.npy"), np.ascontiguousarray(matrix))
        files.append((name, f"{name}.npy"))
    for name, bias in zip(("b_Q", "b_K", "b_V", "b_O"), biases(layer)):
        if bias is None:
            continue
        vector = bias.detach().to(torch.float64).numpy()
        np.save(os.path.join(out_dir, f"{name}.npy"), np.ascontiguousarray(vector))
        files.append((name, f"{name}.npy"))
    path = os.path.join(out_dir, "lesson.yaml")
    with open(path, "w", encoding="utf-8") as f:
        f.write(lesson_text(title, tokens, layer.num_heads, files))
    return path


def demo_layer(seed=0, embed_dim=8, heads=2, n_tokens=4):
    """A seeded float64 layer with non-zero biases (PyTorch starts them at zero), and an input
    for it."""
    torch.manual_seed(seed)
    layer = torch.nn.MultiheadAttention(embed_dim, heads, dtype=torch.float64)
    with torch.no_grad():
        layer.in_proj_bias.normal_(0.0, 0.5)
        layer.out_proj.bias.normal_(0.0, 0.5)
    x = torch.randn(n_tokens, embed_dim, dtype=torch.float64)
    return layer, x.numpy()


class UnknownLayer(Exception):
    """--layer names no module of the model; the message lists the layers it could name."""


def layer_names(model):
    """The names --layer can take: the model's attention layers, or every named submodule when
    it has none (a model written without nn.MultiheadAttention)."""
    named = [(name, module) for name, module in model.named_modules() if name]
    attention = [name for name, module in named
                 if isinstance(module, torch.nn.MultiheadAttention)]
    return attention or [name for name, _ in named]


def find_layer(model, layer_name):
    """The submodule layer_name names, or UnknownLayer with the nearest name and the list."""
    modules = dict(model.named_modules())
    if layer_name in modules:
        return modules[layer_name]
    choices = layer_names(model)
    nearest = difflib.get_close_matches(layer_name, list(modules), n=1, cutoff=0.6)
    message = f"--layer: the model has no layer '{layer_name}'"
    if nearest:
        message += f"; did you mean '{nearest[0]}'?"
    kind = "attention layers" if choices and isinstance(modules[choices[0]],
                                                        torch.nn.MultiheadAttention) else "layers"
    shown = ", ".join(choices[:20]) + (f", … ({len(choices) - 20} more)" if len(choices) > 20
                                       else "")
    message += f" (its {kind}: {shown})" if choices else " (it has no layers inside it)"
    raise UnknownLayer(message)


def load_layer(model_path, layer_name):
    model = torch.load(model_path, map_location="cpu")
    if not isinstance(model, torch.nn.Module):
        raise Refused(f"{model_path} holds a {type(model).__name__}, not a module saved whole "
                      "with torch.save(model, path)")
    return find_layer(model, layer_name) if layer_name else model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="a module saved with torch.save")
    parser.add_argument("--layer", default="", help="the attention layer's name in the model")
    parser.add_argument("--input", help="the layer's input, (tokens, embed_dim), as .npy")
    parser.add_argument("--tokens", help="the tokens, separated by spaces")
    parser.add_argument("--title", default="a PyTorch attention layer")
    parser.add_argument("--demo", action="store_true", help="a seeded layer and input")
    parser.add_argument("--out", required=True, help="the folder to write into")
    try:
        args = parser.parse_args()
    except SystemExit as exit_:
        sys.exit(EXIT_USAGE if exit_.code else 0)
    if args.demo:
        layer, x = demo_layer()
        tokens = [f"t{i}" for i in range(x.shape[0])]
    else:
        if not (args.model and args.input and args.tokens):
            parser.print_usage(sys.stderr)
            print("export_torch_layer: give --model, --input and --tokens, or --demo",
                  file=sys.stderr)
            sys.exit(EXIT_USAGE)
        try:
            layer = load_layer(args.model, args.layer)
            x = np.load(args.input)
        except (OSError, AttributeError, ValueError) as error:
            print(f"export_torch_layer: cannot read the model or input: {error}", file=sys.stderr)
            sys.exit(EXIT_NO_INPUT)
        except UnknownLayer as unknown:
            print(f"export_torch_layer: {unknown}", file=sys.stderr)
            sys.exit(EXIT_USAGE)
        except Refused as refusal:
            print(f"export_torch_layer: {refusal}", file=sys.stderr)
            sys.exit(EXIT_DATA)
        tokens = args.tokens.split()
    try:
        path = export(layer, x, tokens, args.out, args.title)
    except Refused as refusal:
        print(f"export_torch_layer: {refusal}", file=sys.stderr)
        sys.exit(EXIT_DATA)
    print(path)


if __name__ == "__main__":
    main()

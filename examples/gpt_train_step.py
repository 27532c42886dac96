"""Dumps the XLA HLO text of one training step of a small GPT for `meshplan plan --hlo`.

Each transformer block runs under jax.named_scope("layers_<i>"), so the forward ops carry
op_name=".../jvp(layers_<i>)/..." and the backward ops ".../transpose(jvp(layers_<i>))/...":
meshplan reads the pipeline layers from these scopes. The step is forward, backward and an
Adam update with fp32 moments; parameters, moments and outputs are donated (input_output_alias),
which is how meshplan tells trained state from the batch.

    python gpt_train_step.py --layers 4 --hidden 1024 --heads 16 --ffn 4096 --vocab 32000 \
        --seq 1024 --batch 8 > gpt_train_step.hlo
"""
import argparse

import jax
import jax.numpy as jnp

ap = argparse.ArgumentParser()
for flag, default in [("layers", 4), ("hidden", 1024), ("heads", 16), ("ffn", 4096),
                      ("vocab", 32000), ("seq", 1024), ("batch", 8)]:
    ap.add_argument("--" + flag, type=int, default=default)
a = ap.parse_args()
L, D, H, F, V, S, B = a.layers, a.hidden, a.heads, a.ffn, a.vocab, a.seq, a.batch
dt = jnp.bfloat16


def init():
    p = {"embed": jnp.zeros((V, D), dt), "head": jnp.zeros((D, V), dt), "ln_f": jnp.ones((D,), dt)}
    for i in range(L):
        p[f"layers_{i}"] = {"ln1": jnp.ones((D,), dt), "wqkv": jnp.zeros((D, 3 * D), dt),
                            "wo": jnp.zeros((D, D), dt), "ln2": jnp.ones((D,), dt),
                            "w1": jnp.zeros((D, F), dt), "w2": jnp.zeros((F, D), dt)}
    return p


def rms(x, g):
    x32 = x.astype(jnp.float32)
    return (x32 * jax.lax.rsqrt(jnp.mean(x32 * x32, -1, keepdims=True) + 1e-5)).astype(dt) * g


def block(p, x):
    h = rms(x, p["ln1"])
    q, k, v = jnp.split(h @ p["wqkv"], 3, -1)
    hd = D // H
    q, k, v = (t.reshape(B, S, H, hd) for t in (q, k, v))
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(hd).astype(dt)
    s = jnp.where(jnp.tril(jnp.ones((S, S), bool)), s, jnp.asarray(-1e4, dt))
    att = jax.nn.softmax(s.astype(jnp.float32), -1).astype(dt)
    x = x + jnp.einsum("bhqk,bkhd->bqhd", att, v).reshape(B, S, D) @ p["wo"]
    return x + jax.nn.gelu(rms(x, p["ln2"]) @ p["w1"]) @ p["w2"]


def loss(p, tokens, labels):
    x = p["embed"][tokens]
    for i in range(L):
        with jax.named_scope(f"layers_{i}"):
            x = block(p[f"layers_{i}"], x)
    logits = (rms(x, p["ln_f"]) @ p["head"]).astype(jnp.float32)
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], -1))


def train_step(params, m, v, tokens, labels):
    value, grads = jax.value_and_grad(loss)(params, tokens, labels)

    def adam(p, g, m, v):
        g = g.astype(jnp.float32)
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        return (p.astype(jnp.float32) - 1e-4 * m / (jnp.sqrt(v) + 1e-8)).astype(dt), m, v

    out = jax.tree_util.tree_map(adam, params, grads, m, v)
    leaf = lambda t: isinstance(t, tuple)
    pick = lambda i: jax.tree_util.tree_map(lambda t: t[i], out, is_leaf=leaf)
    return pick(0), pick(1), pick(2), value


# Shapes only: nothing of the model's size is allocated.
params = jax.eval_shape(init)
moments = jax.tree_util.tree_map(lambda t: jax.ShapeDtypeStruct(t.shape, jnp.float32), params)
tokens = jax.ShapeDtypeStruct((B, S), jnp.int32)
lowered = jax.jit(train_step, donate_argnums=(0, 1, 2)).lower(params, moments, moments, tokens,
                                                              tokens)
print(lowered.as_text(dialect="hlo", debug_info=True))

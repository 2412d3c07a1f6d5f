#!/usr/bin/env bash
# The tests' Python environment for TensorBoard: a venv at $1 with the `tensorboard` package from
# PyPI (its EventAccumulator reads event files as TensorBoard does; its server serves them). Made
# once; when the venv already imports tensorboard this returns at once. Needs python3-venv (Debian).
set -euo pipefail
venv=$1
version=2.21.0 # the TensorBoard the tests were written against
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "import tensorboard, numpy" 2>/dev/null; then
  echo "make_venv: $venv has tensorboard $("$venv/bin/python" -c 'import tensorboard; print(tensorboard.__version__)')"
  exit 0
fi
if ! python3 -c "import ensurepip, venv" 2>/dev/null; then
  echo "make_venv: python3's venv module is missing. Install it with:  apt-get install -y python3-venv" >&2
  exit 1
fi
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install --quiet --disable-pip-version-check "tensorboard==$version" numpy
echo "make_venv: $venv has tensorboard $("$venv/bin/python" -c 'import tensorboard; print(tensorboard.__version__)')"

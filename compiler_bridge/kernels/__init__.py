"""kernels: what each backend decided for each kernel of a module — the GPU emitter, Triton
tiles, thunk and PTX; the TPU tiled layout, memory space, window config and estimated cycles
— read from a dump's files with the readers of ``targets``; ``python -m compiler_bridge
kernels``.
"""

from __future__ import annotations

from .cli import add_kernels_command
from .reader import Kernel, ModuleKernels, code_computations, kernel_ptx, module_kernels

__all__ = ["Kernel", "ModuleKernels", "add_kernels_command", "code_computations", "kernel_ptx",
           "module_kernels"]

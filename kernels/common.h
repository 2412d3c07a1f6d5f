/* Shared by every kernel file; resolved into each .cl when the kernels are embedded (see
 * cmake/EmbedKernels.cmake). Tunables arrive as -D build options chosen per device
 * (engine/kernel_options.c); each has a default here so that a .cl file compiles on its own. */
#ifndef CLS_KERNELS_COMMON_H
#define CLS_KERNELS_COMMON_H

/* Work-group size of 1-D elementwise and reduction kernels; a power of two. */
#ifndef CLS_WG_1D
#define CLS_WG_1D 64
#endif
#if CLS_WG_1D < 1 || (CLS_WG_1D & (CLS_WG_1D - 1)) != 0
#error "CLS_WG_1D must be a power of two"
#endif

#endif

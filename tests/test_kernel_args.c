/* The typed kernel-argument setters (engine/device/kernel_args.h) on every device: a full list of the
 * right count is accepted; one argument short, or one too many, fails with CLS_ERR_OPENCL and a text
 * naming the kernel and the counts or the argument. (That a setter refuses a value of another type is
 * a compile-time property: the _Generic selections in kernel_args.h.) */
#include "check.h"
#include "device/kernel_args.h"
#include "device/log.h"
#include "device/program.h"
#include "ops/ops_util.h"
#include "ops_test.h"

static void run_device(tst_env *env, int index) {
  cls_device *d = NULL;
  cl_kernel k = NULL;
  CHECK_INT(cls_ops_device(env->engine, index, &d), CLS_OK);
  if (!d) return;
  CHECK_INT(cls_device_kernel(env->engine, d, "peak", "peak_copy", &k), CLS_OK); /* (src, dst, int n) */
  if (!k) return;
  cl_mem src = tst_buffer(env, index, NULL, 64), dst = tst_buffer(env, index, NULL, 64);
  cl_int n = 4;

  cls_kargs ka = cls_kargs_begin(cls_engine_errors(env->engine), k, "peak_copy");
  cls_kargs_mem(&ka, src);
  cls_kargs_mem(&ka, dst);
  cls_kargs_int(&ka, n);
  CHECK_INT(cls_kargs_end(&ka), CLS_OK);
  CHECK_INT(ka.n, 3);

  ka = cls_kargs_begin(cls_engine_errors(env->engine), k, "peak_copy");
  cls_kargs_mem(&ka, src);
  cls_kargs_mem(&ka, dst);
  CHECK_INT(cls_kargs_end(&ka), CLS_ERR_OPENCL);
  CHECK_CONTAINS(cls_engine_error(env->engine), "peak_copy: the kernel takes 3 arguments, 2 were set");

  ka = cls_kargs_begin(cls_engine_errors(env->engine), k, "peak_copy");
  cls_kargs_mem(&ka, src);
  cls_kargs_mem(&ka, dst);
  cls_kargs_int(&ka, n);
  cls_kargs_int(&ka, n);
  CHECK_INT(cls_kargs_end(&ka), CLS_ERR_OPENCL);
  CHECK_CONTAINS(cls_engine_error(env->engine), "peak_copy: clSetKernelArg(3) failed: CL_INVALID_ARG_INDEX");

  clReleaseMemObject(src);
  clReleaseMemObject(dst);
  clReleaseKernel(k);
}

int main(void) {
  tst_env env;
  if (!tst_open(&env)) return check_finish("test_kernel_args");
  for (int i = 0; i < env.n_devices; i++) run_device(&env, env.devices[i]);
  tst_close_env(&env);
  return check_finish("test_kernel_args");
}

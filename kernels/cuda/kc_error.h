/* kc_error.h: the library's error recorder, shared by its C and C++ files:
 * records "what (file:line): msg" as this thread's kern_cuda_last_error()
 * and returns st. Internal to libulykern_cuda. */
#ifndef KC_ERROR_H
#define KC_ERROR_H

#include "kern_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

kern_cuda_status kc_fail(kern_cuda_status st, const char *what, const char *file, int line, const char *msg);

#ifdef __cplusplus
}
#endif

#endif

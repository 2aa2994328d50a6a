// libjpeg's error reporting for the decoder and the encoder: an error formats
// its message and longjmps back to the caller's setjmp (libjpeg is C; a C++
// exception must not unwind through it).
#pragma once
#include <csetjmp>

// jpeglib.h uses size_t and FILE without including their headers.
// clang-format off
#include <cstdio>
#include <jpeglib.h>
// clang-format on

namespace firebrand {

struct JpegErrors {
  jpeg_error_mgr manager;
  jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

inline void onJpegError(j_common_ptr info) {
  auto* errors = reinterpret_cast<JpegErrors*>(info->err);
  (*info->err->format_message)(info, errors->message);
  longjmp(errors->jump, 1);
}

// libjpeg's standard manager with errors sent to onJpegError; assign it to the codec's `err`.
inline jpeg_error_mgr* jpegErrorManager(JpegErrors& errors) {
  jpeg_error_mgr* manager = jpeg_std_error(&errors.manager);
  manager->error_exit = onJpegError;
  errors.message[0] = '\0';
  return manager;
}

}  // namespace firebrand

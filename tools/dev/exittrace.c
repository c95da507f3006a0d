// LD_PRELOAD helper for the device machine (no gdb there): prints a host backtrace when the
// process calls exit() or _exit(), then exits as asked. gcc -shared -fPIC -o exittrace.so exittrace.c -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <execinfo.h>
#include <stdio.h>
#include <unistd.h>

static void trace(const char* what, int code) {
    void* frames[64];
    int n = backtrace(frames, 64);
    fprintf(stderr, "exittrace: %s(%d), backtrace:\n", what, code);
    backtrace_symbols_fd(frames, n, 2);
}
void exit(int code) {
    trace("exit", code);
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "exit");
    real(code);
    for (;;) {
    }
}
void _exit(int code) {
    trace("_exit", code);
    void (*real)(int) = (void (*)(int))dlsym(RTLD_NEXT, "_exit");
    real(code);
    for (;;) {
    }
}

// Clang thread-safety annotations (no-ops under GCC). They document, at each
// declaration, which mutex guards a field; Clang with -Wthread-safety checks it.
#pragma once

#if defined(__clang__)
#define BFS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define BFS_THREAD_ANNOTATION(x)
#endif

#define GUARDED_BY(x) BFS_THREAD_ANNOTATION(guarded_by(x))
#define REQUIRES(...) BFS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define EXCLUDES(...) BFS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))

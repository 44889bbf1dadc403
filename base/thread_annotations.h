// Clang thread-safety annotations: each says, at a declaration, which mutex
// guards a field, which mutexes a function needs or takes, and in what order
// mutexes nest. Clang with -Wthread-safety checks them (the `thread-safety`
// preset); other compilers see nothing. Use them with base/mutex.h: the
// standard library's mutexes carry no capability attributes.
#pragma once

#if defined(__clang__)
#define BFS_THREAD_ANNOTATION(x) __attribute__((x))
#else
#define BFS_THREAD_ANNOTATION(x)
#endif

// A class whose objects are capabilities (mutexes): CAPABILITY("mutex").
#define CAPABILITY(name) BFS_THREAD_ANNOTATION(capability(name))
// An RAII class that holds a capability for its lifetime.
#define SCOPED_CAPABILITY BFS_THREAD_ANNOTATION(scoped_lockable)

// A field read or written only with the mutex held.
#define GUARDED_BY(x) BFS_THREAD_ANNOTATION(guarded_by(x))
// A pointer whose pointee is read or written only with the mutex held.
#define PT_GUARDED_BY(x) BFS_THREAD_ANNOTATION(pt_guarded_by(x))

// Lock order: this mutex is taken before (or after) the named ones.
#define ACQUIRED_BEFORE(...) BFS_THREAD_ANNOTATION(acquired_before(__VA_ARGS__))
#define ACQUIRED_AFTER(...) BFS_THREAD_ANNOTATION(acquired_after(__VA_ARGS__))

// The caller holds the mutexes (exclusively, or at least shared).
#define REQUIRES(...) BFS_THREAD_ANNOTATION(requires_capability(__VA_ARGS__))
#define REQUIRES_SHARED(...) BFS_THREAD_ANNOTATION(requires_shared_capability(__VA_ARGS__))

// The function takes (or lets go of) the mutexes and returns holding them
// (or not); with no argument, on a scoped class, the object's own capability.
#define ACQUIRE(...) BFS_THREAD_ANNOTATION(acquire_capability(__VA_ARGS__))
#define ACQUIRE_SHARED(...) BFS_THREAD_ANNOTATION(acquire_shared_capability(__VA_ARGS__))
#define RELEASE(...) BFS_THREAD_ANNOTATION(release_capability(__VA_ARGS__))
#define RELEASE_SHARED(...) BFS_THREAD_ANNOTATION(release_shared_capability(__VA_ARGS__))
// The function takes the mutexes when it returns the first argument.
#define TRY_ACQUIRE(...) BFS_THREAD_ANNOTATION(try_acquire_capability(__VA_ARGS__))

// The caller must not hold the mutexes (the function takes them itself).
#define EXCLUDES(...) BFS_THREAD_ANNOTATION(locks_excluded(__VA_ARGS__))
// The function returns a reference to the named mutex (an accessor).
#define RETURN_CAPABILITY(x) BFS_THREAD_ANNOTATION(lock_returned(x))

// Turns the analysis off for one function; each use says why on its line.
#define NO_THREAD_SAFETY_ANALYSIS BFS_THREAD_ANNOTATION(no_thread_safety_analysis)

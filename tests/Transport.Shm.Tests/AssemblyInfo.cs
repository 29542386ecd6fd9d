// Cross-process tests start child processes and check /dev/shm; on a two-core machine they are steadier
// (and their file checks unambiguous) when test classes do not run at the same time.
[assembly: CollectionBehavior(DisableTestParallelization = true)]

// Shared memory through /dev/shm, Unix sockets and uids: these tests are for Unix systems.
[assembly: System.Runtime.Versioning.UnsupportedOSPlatform("windows")]

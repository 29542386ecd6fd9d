// Shared memory, Unix sockets, /proc and Unix file modes: these tests are for Unix systems.
[assembly: System.Runtime.Versioning.UnsupportedOSPlatform("windows")]

namespace XCall.Transport.Shm.Tests.Support;

/// <summary>Files in /dev/shm named after a process: segments are memfds, so none may appear.</summary>
internal static class ShmFiles
{
    public static string[] Of(int pid) =>
        Directory.Exists("/dev/shm") ? Directory.GetFiles("/dev/shm", $"xcall-{pid}-*") : [];
}

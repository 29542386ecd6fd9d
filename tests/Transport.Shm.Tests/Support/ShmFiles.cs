namespace XCall.Transport.Shm.Tests.Support;

/// <summary>Files in /dev/shm named after a process, as segments were before they became memfds: none may appear.</summary>
internal static class ShmFiles
{
    public static string[] Of(int pid) =>
        Directory.Exists("/dev/shm") ? Directory.GetFiles("/dev/shm", $"xcall-{pid}-*") : [];
}

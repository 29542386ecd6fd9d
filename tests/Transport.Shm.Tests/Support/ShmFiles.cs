namespace XCall.Transport.Shm.Tests.Support;

/// <summary>Segment files of a process in /dev/shm.</summary>
internal static class ShmFiles
{
    public static string[] Of(int pid) =>
        Directory.Exists("/dev/shm") ? Directory.GetFiles("/dev/shm", $"{ShmSegment.FilePrefix}{pid}-*") : [];
}

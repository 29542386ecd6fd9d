namespace XCall.Transport.Shm.Tests.Support;

/// <summary>What of this process holds the segments served under a name (their memfds are named after it).</summary>
internal static class SegmentMemory
{
    /// <summary>Mappings plus open descriptors of the segments of <paramref name="name"/> in this process.</summary>
    public static int HoldersOf(string name)
    {
        string memfd = $"/memfd:{ShmSegment.NamePrefix}{name} (deleted)";
        int mappings = File.ReadLines("/proc/self/maps").Count(line => line.EndsWith(memfd, StringComparison.Ordinal));
        int descriptors = new DirectoryInfo("/proc/self/fd").EnumerateFileSystemInfos().Count(fd => fd.LinkTarget == memfd);
        return mappings + descriptors;
    }
}

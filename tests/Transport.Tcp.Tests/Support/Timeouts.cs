namespace XCall.Transport.Tcp.Tests.Support;

/// <summary>Upper bounds that only stop a broken test from hanging; nothing is expected to take this long.</summary>
internal static class Timeouts
{
    public static readonly TimeSpan Long = TimeSpan.FromSeconds(30);
}

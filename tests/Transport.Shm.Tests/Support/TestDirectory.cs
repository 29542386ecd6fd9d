namespace XCall.Transport.Shm.Tests.Support;

/// <summary>A runtime directory of its own for one test (created by the listener, removed afterwards).</summary>
internal sealed class TestDirectory : IDisposable
{
    public TestDirectory()
    {
        Path = System.IO.Path.Combine("/tmp", $"xcall-test-{Guid.NewGuid():N}"[..24]);
    }

    public string Path { get; }

    public ShmOptions Options(ShmIdleStrategy strategy = ShmIdleStrategy.Adaptive) => new() { RuntimeDirectory = Path, IdleStrategy = strategy };

    public void Dispose()
    {
        try
        {
            Directory.Delete(Path, recursive: true);
        }
        catch (DirectoryNotFoundException)
        {
        }
    }
}

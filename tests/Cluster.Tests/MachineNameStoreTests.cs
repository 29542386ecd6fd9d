using System.Diagnostics;

namespace XCall.Cluster.Tests;

public sealed class MachineNameStoreTests : IDisposable
{
    private static readonly TimeSpan s_hang = TimeSpan.FromSeconds(10);
    private readonly string _runtime = Path.Combine(Path.GetTempPath(), $"xcall-names-{Guid.NewGuid():N}");

    public void Dispose() => Directory.Delete(_runtime, recursive: true);

    [Fact]
    public async Task A_name_keeps_its_first_value_and_is_found_by_another_store()
    {
        using var mine = new MachineNameStore(_runtime);
        using var theirs = new MachineNameStore(_runtime);
        Assert.Null(await theirs.GetAsync("a/b c", CancellationToken.None));
        Assert.Equal("v1", await mine.AddAsync("a/b c", "v1", CancellationToken.None));
        Assert.Equal("v1", await theirs.AddAsync("a/b c", "v2", CancellationToken.None));
        Assert.Equal("v1", await theirs.GetAsync("a/b c", CancellationToken.None));
        Assert.Equal(UnixFileMode.UserRead | UnixFileMode.UserWrite | UnixFileMode.UserExecute, File.GetUnixFileMode(Path.Combine(_runtime, "names")));
    }

    [Fact]
    public async Task A_wait_ends_when_the_name_is_registered_or_its_token_is_cancelled()
    {
        using var store = new MachineNameStore(_runtime);
        Task<string> waiting = store.WaitAsync("later", CancellationToken.None);
        Assert.False(waiting.IsCompleted);
        await store.AddAsync("later", "here", CancellationToken.None);
        Assert.Equal("here", await waiting.WaitAsync(s_hang));

        using var cancel = new CancellationTokenSource();
        Task<string> never = store.WaitAsync("never", cancel.Token);
        await cancel.CancelAsync();
        await Assert.ThrowsAnyAsync<OperationCanceledException>(() => never.WaitAsync(s_hang));
    }

    [Fact]
    public async Task A_name_whose_owner_ended_is_absent_and_can_be_registered_again()
    {
        using var store = new MachineNameStore(_runtime);
        using Process ended = Process.Start(new ProcessStartInfo("true"))!;
        await ended.WaitForExitAsync();
        File.WriteAllText(Path.Combine(_runtime, "names", "n-old"), $"{ended.Id} 12345\nstale");
        Assert.Null(await store.GetAsync("old", CancellationToken.None));
        Assert.Equal("fresh", await store.AddAsync("old", "fresh", CancellationToken.None));
    }

    [Fact]
    public async Task Disposing_removes_the_names_it_registered()
    {
        var store = new MachineNameStore(_runtime);
        await store.AddAsync("gone", "soon", CancellationToken.None);
        store.Dispose();
        using var other = new MachineNameStore(_runtime);
        Assert.Null(await other.GetAsync("gone", CancellationToken.None));
    }
}

using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;

namespace XCall.FastProxy.Tests;

/// <summary>
/// A <see cref="LongWaitAttribute"/> method's calls go out marked <see cref="FrameFlags.LongWait"/>, and the answer, a
/// reply or an error, carries the mark back, so a transport can wake the thread that reads the connection for it
/// (Transport.Shm.Tests shows what the mark does there). Other calls stay unmarked.
/// </summary>
public sealed class LongWaitCallTests
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task A_long_wait_goes_out_marked_and_its_reply_carries_the_mark_back()
    {
        var waits = new Waits();
        using Served served = new(waits);

        Task<int> next = served.Proxy.NextAsync(41);
        TaskCompletionSource<int> held = await waits.Held.Task.WaitAsync(s_bound);
        Assert.Equal(7, served.Proxy.Echo(7)); // answered while the long wait is out
        Assert.False(next.IsCompleted);
        held.SetResult(42);
        Assert.Equal(42, await next.WaitAsync(s_bound));

        FrameHeader[] calls = [.. served.CallerChannel.Committed.Where(h => h.Kind == FrameKind.Call)];
        Assert.Equal(2, calls.Length);
        Assert.Equal(FrameFlags.LongWait, calls[0].Flags & FrameFlags.LongWait);
        Assert.Equal(0, calls[1].Flags & FrameFlags.LongWait);
        FrameHeader[] replies = [.. served.ServedChannel.Committed.Where(h => h.Kind == FrameKind.Reply)];
        Assert.Equal(FrameFlags.LongWait, replies.Single(r => r.CallId == calls[0].CallId).Flags);
        Assert.Equal(0, replies.Single(r => r.CallId == calls[1].CallId).Flags);
    }

    [Fact]
    public async Task A_long_wait_that_fails_carries_the_mark_back_on_its_error()
    {
        using Served served = new(new Waits());

        var error = await Assert.ThrowsAsync<RemoteInvocationException>(() => served.Proxy.FailAsync(CancellationToken.None).AsTask().WaitAsync(s_bound));
        Assert.Equal("no event", error.RemoteMessage);
        FrameHeader call = served.CallerChannel.Committed.Single(h => h.Kind == FrameKind.Call);
        Assert.Equal(FrameFlags.LongWait, call.Flags & FrameFlags.LongWait);
        FrameHeader answer = served.ServedChannel.Committed.Single(h => h.CallId == call.CallId);
        Assert.Equal(FrameKind.Error, answer.Kind);
        Assert.Equal(FrameFlags.LongWait, answer.Flags);
    }

    /// <summary>Holds each <see cref="ILongWaits.NextAsync"/> until the test answers it.</summary>
    private sealed class Waits : ILongWaits
    {
        public TaskCompletionSource<TaskCompletionSource<int>> Held { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public Task<int> NextAsync(int after)
        {
            var answer = new TaskCompletionSource<int>(TaskCreationOptions.RunContinuationsAsynchronously);
            Held.TrySetResult(answer);
            return answer.Task;
        }

        public async ValueTask FailAsync(CancellationToken cancellationToken)
        {
            await Task.Yield();
            throw new InvalidOperationException("no event");
        }

        public int Echo(int value) => value;
    }

    /// <summary>A caller's connection to a server connection exposing <paramref name="waits"/>, over an in-memory pair.</summary>
    private sealed class Served : IDisposable
    {
        private readonly XCallConnection _served;
        private readonly XCallConnection _caller;

        public Served(ILongWaits waits)
        {
            (InMemoryChannel served, InMemoryChannel caller) = InMemoryChannel.CreatePair($"longwait-{Guid.NewGuid():N}");
            ServedChannel = served;
            CallerChannel = caller;
            _served = new XCallConnection(served);
            _served.ExposeRoot(waits, ContractRegistry.Get<ILongWaits>().Dispatcher);
            _served.Start();
            _caller = new XCallConnection(caller);
            _caller.Start();
            Proxy = _caller.GetProxy<ILongWaits>();
        }

        public ILongWaits Proxy { get; }

        public InMemoryChannel ServedChannel { get; }

        public InMemoryChannel CallerChannel { get; }

        public void Dispose()
        {
            _caller.Dispose();
            _served.Dispose();
        }
    }
}

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

    [Fact]
    public async Task A_callback_made_while_serving_a_long_wait_is_not_nested_in_it()
    {
        // A nested frame is one its receiver's callers poll for; nobody polls for a long wait, so a callback nested in
        // one could sit unread where callers leave the ring marked. It goes as a call of its own.
        using Served served = new(new Waits());

        Assert.Equal(5, await served.Proxy.CallBackAsync(new Adder()).WaitAsync(s_bound));
        FrameHeader longWait = served.CallerChannel.Committed.Single(h => h.Kind == FrameKind.Call);
        Assert.Equal(FrameFlags.LongWait, longWait.Flags & FrameFlags.LongWait);
        FrameHeader callback = served.ServedChannel.Committed.Single(h => h.Kind == FrameKind.Call);
        Assert.Equal(0, callback.Flags & (FrameFlags.Nested | FrameFlags.LongWait));
    }

    [Theory]
    [InlineData(true)]
    [InlineData(false)]
    public async Task An_answer_that_does_not_echo_its_calls_mark_closes_the_connection(bool longWait)
    {
        var waits = new Waits();
        using Served served = new(waits);
        var closed = new TaskCompletionSource<Exception?>(TaskCreationOptions.RunContinuationsAsynchronously);
        served.Caller.Closed += (_, error) => closed.TrySetResult(error);
        Task<int> call = longWait ? served.Proxy.NextAsync(1) : served.Proxy.HeldAsync();
        await waits.Held.Task.WaitAsync(s_bound); // the server holds the call: only the answer injected below comes
        FrameHeader sent = served.CallerChannel.Committed.Single(h => h.Kind == FrameKind.Call);
        var wrong = new FrameHeader(FrameKind.Reply, sent.CallId, 0, sent.MethodId, longWait ? (ushort)0 : FrameFlags.LongWait);
        byte[] frame = new byte[FrameHeader.Size + sizeof(int)];
        System.Runtime.InteropServices.MemoryMarshal.Write(frame, in wrong);
        served.ServedChannel.InjectRaw(frame);
        Exception? error = await closed.Task.WaitAsync(s_bound);
        Assert.Contains("LongWait", Assert.IsType<XCallProtocolException>(error).Message);
        await Assert.ThrowsAnyAsync<XCallException>(() => call.WaitAsync(s_bound));
    }

    private sealed class Adder : ILongWaitsCallback
    {
        public int Add(int a, int b) => a + b;
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

        public Task<int> HeldAsync() => NextAsync(0);

        public Task<int> CallBackAsync(ILongWaitsCallback back) => Task.FromResult(back.Add(2, 3));
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

        public XCallConnection Caller => _caller;

        public InMemoryChannel ServedChannel { get; }

        public InMemoryChannel CallerChannel { get; }

        public void Dispose()
        {
            _caller.Dispose();
            _served.Dispose();
        }
    }
}

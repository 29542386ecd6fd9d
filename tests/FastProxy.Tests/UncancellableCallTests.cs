using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Transport;

namespace XCall.FastProxy.Tests;

/// <summary>
/// A call its caller can never cancel goes out marked <see cref="FrameFlags.Uncancellable"/>: its method gets the token
/// the connection shares among such calls instead of one of its own, and that token is still cancelled when the
/// connection closes. A call timeout can cancel a call, so a timed call is not marked.
/// </summary>
public sealed class UncancellableCallTests
{
    private static readonly TimeSpan s_bound = TimeSpan.FromSeconds(60);

    [Theory]
    [InlineData(false)]
    [InlineData(true)]
    public async Task Calls_their_callers_cannot_cancel_share_one_token(bool timed)
    {
        var shapes = new Recording();
        using Served served = new(shapes, timed);
        IShapes proxy = served.Proxy;

        proxy.CanCancel(CancellationToken.None);
        await proxy.CanCancelAsync(CancellationToken.None);
        using var cts = new CancellationTokenSource();
        proxy.CanCancel(cts.Token);
        await proxy.CanCancelAsync(cts.Token);

        CancellationToken[] tokens = [.. shapes.Tokens];
        Assert.Equal(4, tokens.Length);
        Assert.All(tokens, t => Assert.True(t.CanBeCanceled)); // a lost link or a close ends every call
        if (!timed)
        {
            // The connection's shared token for both calls nobody can cancel; a source of the call's own (pooled) for the others.
            Assert.Equal(tokens[0], tokens[1]);
            Assert.NotEqual(tokens[0], tokens[2]);
            Assert.NotEqual(tokens[0], tokens[3]);
        }
    }

    [Fact]
    public async Task Closing_the_connection_cancels_a_method_whose_caller_could_not()
    {
        var shapes = new Recording();
        Served served = new(shapes, timed: false);
        Task<int> call = Task.Factory.StartNew(() => served.Proxy.WaitForCancel(CancellationToken.None), TaskCreationOptions.LongRunning);
        CancellationToken token = await shapes.Entered.Task.WaitAsync(s_bound);
        Assert.False(token.IsCancellationRequested);

        served.Dispose(); // the caller's side closes: the server's connection sees its link end
        Assert.True(await shapes.Returned.Task.WaitAsync(s_bound)); // the method saw its token cancelled
        await Assert.ThrowsAnyAsync<XCallException>(() => call.WaitAsync(s_bound));
    }

    [Fact]
    public async Task What_an_ended_call_left_registered_on_the_shared_token_goes_with_it()
    {
        var shapes = new Recording { LeaksRegistrations = true };
        Served served = new(shapes, timed: false);
        for (int i = 0; i < 10; i++)
        {
            served.Proxy.CanCancel(CancellationToken.None); // each leaves a registration on the token it got, never disposed
        }
        // The server returns a call after its reply went: wait until the last of them ended, as the next call would find.
        Assert.True(SpinWait.SpinUntil(() => served.Server.UncancellableRunning == 0, s_bound));
        Task<int> call = Task.Factory.StartNew(() => served.Proxy.WaitForCancel(CancellationToken.None), TaskCreationOptions.LongRunning);
        await shapes.Entered.Task.WaitAsync(s_bound);

        served.Dispose();
        Assert.True(await shapes.Returned.Task.WaitAsync(s_bound)); // the running call is cancelled
        Assert.Equal(0, Volatile.Read(ref shapes.LeakedCallbacksRun)); // the ended calls' registrations were dropped
        await Assert.ThrowsAnyAsync<XCallException>(() => call.WaitAsync(s_bound));
    }

    /// <summary>Shapes that keeps the tokens its methods got, and tells when <see cref="IShapes.WaitForCancel"/> began and how it ended.</summary>
    private sealed class Recording : Shapes, IShapes
    {
        public List<CancellationToken> Tokens { get; } = [];

        public bool LeaksRegistrations { get; init; }

        public int LeakedCallbacksRun;

        public TaskCompletionSource<CancellationToken> Entered { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        public TaskCompletionSource<bool> Returned { get; } = new(TaskCreationOptions.RunContinuationsAsynchronously);

        bool IShapes.CanCancel(CancellationToken cancellationToken)
        {
            lock (Tokens)
            {
                Tokens.Add(cancellationToken);
            }
            if (LeaksRegistrations)
            {
                cancellationToken.Register(() => Interlocked.Increment(ref LeakedCallbacksRun)); // never disposed, on purpose
            }
            return cancellationToken.CanBeCanceled;
        }

        async Task<bool> IShapes.CanCancelAsync(CancellationToken cancellationToken)
        {
            await Task.Yield();
            return ((IShapes)this).CanCancel(cancellationToken);
        }

        int IShapes.WaitForCancel(CancellationToken cancellationToken)
        {
            Entered.TrySetResult(cancellationToken);
            bool cancelled = cancellationToken.WaitHandle.WaitOne(s_bound);
            Returned.TrySetResult(cancelled);
            return cancelled ? 1 : 0;
        }
    }

    /// <summary>A caller's connection to a server connection exposing <paramref name="shapes"/>, over an in-memory pair.</summary>
    private sealed class Served : IDisposable
    {
        private readonly XCallConnection _served;
        private readonly XCallConnection _caller;

        public Served(IShapes shapes, bool timed)
        {
            (InMemoryChannel served0, InMemoryChannel caller0) = InMemoryChannel.CreatePair($"uncancellable-{Guid.NewGuid():N}");
            _served = new XCallConnection(served0);
            _served.ExposeRoot(shapes, ContractRegistry.Get<IShapes>().Dispatcher);
            _served.Start();
            _caller = new XCallConnection(caller0, new ConnectionOptions { CallTimeout = timed ? TimeSpan.FromMinutes(5) : Timeout.InfiniteTimeSpan });
            _caller.Start();
            Proxy = _caller.GetProxy<IShapes>();
        }

        public IShapes Proxy { get; }

        public XCallConnection Server => _served;

        public void Dispose()
        {
            _caller.Dispose();
            _served.Dispose();
        }
    }
}

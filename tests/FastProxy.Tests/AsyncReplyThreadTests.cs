using System.Threading.Tasks.Sources;
using XCall.Runtime;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>Async methods whose task the test completes from a thread of its own.</summary>
[Remotable]
public interface IDeferredReplies
{
    /// <summary>Completes when the test completes the service's source; returns its value plus <paramref name="add"/>.</summary>
    ValueTask<int> NextAsync(int add);

    /// <summary>Completes when the test completes the service's source.</summary>
    ValueTask WaitAsync();

    /// <summary>Completes the service's source before it returns its task.</summary>
    ValueTask DoneAsync();
}

/// <summary>
/// Where an async server method's reply is written when its task completes later: on the thread that completes
/// it, inline (no thread-pool hop). A remote rendezvous write relies on it: the channel's reader completes the
/// write's task and the answer leaves from the reader's thread.
/// </summary>
public sealed class AsyncReplyThreadTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(30);

    public static TheoryData<string> Forms => new() { "ValueTask<T>", "ValueTask", "ValueTask<T> failing" };

    [Theory]
    [MemberData(nameof(Forms))]
    public async Task A_reply_is_sent_by_the_thread_that_completes_the_task(string form)
    {
        var service = new DeferredReplies();
        using var server = new XCallServer().Add<IDeferredReplies>(service);
        (InMemoryChannel serverChannel, XCallConnection client) = Connect(server);
        using XCallConnection connected = client;
        IDeferredReplies proxy = client.GetService<IDeferredReplies>();
        bool failing = form == "ValueTask<T> failing";
        for (int round = 0; round < 3; round++)
        {
            // Each round reuses the source (and the connection's pooled server call), as a channel's writes do. The server
            // returns the last round's call just after its answer went: this round's is then the only one in flight.
            Assert.True(SpinWait.SpinUntil(() => server.CallsInFlight == 0, s_wait), "the answered call stayed in flight");
            Task<int> call = form == "ValueTask" ? Ended(proxy.WaitAsync()) : proxy.NextAsync(round).AsTask();
            await service.Awaited.WaitAsync(s_wait); // the dispatch awaits the task: the reply is its continuation's
            Assert.Equal(1, server.CallsInFlight);

            int completerId = 0;
            var completer = new Thread(() =>
            {
                completerId = Environment.CurrentManagedThreadId;
                service.Complete(40, failing ? new InvalidOperationException("refused " + round) : null);
            });
            completer.Start();
            Assert.True(completer.Join(s_wait), "the completing thread did not return");

            if (failing)
            {
                // The error frame is the dispatch's to send, on whichever thread ends it; it must arrive.
                RemoteInvocationException error = await Assert.ThrowsAsync<RemoteInvocationException>(() => call.WaitAsync(s_wait));
                Assert.Contains("refused " + round, error.Message, StringComparison.Ordinal);
                continue;
            }
            Assert.Equal(completerId, serverChannel.LastCommitThread); // the reply frame was sent before SetResult returned
            Assert.Equal(form == "ValueTask" ? 0 : 40 + round, await call.WaitAsync(s_wait));
        }
    }

    [Fact]
    public async Task A_value_task_complete_when_returned_is_consumed_so_its_source_can_be_reused()
    {
        var service = new DeferredReplies();
        using var server = new XCallServer().Add<IDeferredReplies>(service);
        using XCallConnection client = Connect(server).Client;
        IDeferredReplies proxy = client.GetService<IDeferredReplies>();
        for (int round = 0; round < 3; round++)
        {
            // The source resets in GetResult: a reply sent without reading the task leaves it completed, and the
            // next round's SetResult throws.
            await proxy.DoneAsync().AsTask().WaitAsync(s_wait);
        }
        Assert.Equal(0, server.CallsInFlight);
    }

    /// <summary>A started client connected to <paramref name="server"/> over an in-memory pair; returns the server's end too.</summary>
    private static (InMemoryChannel ServerChannel, XCallConnection Client) Connect(XCallServer server)
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        server.Attach(serverChannel);
        var client = new XCallConnection(clientChannel);
        client.Start();
        return (serverChannel, client);
    }

    private static async Task<int> Ended(ValueTask pending)
    {
        await pending;
        return 0;
    }

    /// <summary>One pending call at a time, its task a reused value-task source that runs continuations inline.</summary>
    private sealed class DeferredReplies : IDeferredReplies, IValueTaskSource<int>, IValueTaskSource
    {
        private ManualResetValueTaskSourceCore<int> _core;
        private TaskCompletionSource _awaited = new(TaskCreationOptions.RunContinuationsAsynchronously);
        private int _add;

        /// <summary>Completes once the pending call's task has its continuation (the server's await).</summary>
        public Task Awaited => Volatile.Read(ref _awaited).Task;

        public ValueTask<int> NextAsync(int add)
        {
            _add = add;
            return new ValueTask<int>(this, _core.Version);
        }

        public ValueTask WaitAsync()
        {
            _add = 0;
            return new ValueTask(this, _core.Version);
        }

        public ValueTask DoneAsync()
        {
            _core.SetResult(0);
            return new ValueTask(this, _core.Version);
        }

        public void Complete(int value, Exception? error)
        {
            Volatile.Write(ref _awaited, new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously));
            if (error is not null)
            {
                _core.SetException(error);
                return;
            }
            _core.SetResult(value + _add);
        }

        public int GetResult(short token)
        {
            try
            {
                return _core.GetResult(token);
            }
            finally
            {
                _core.Reset();
            }
        }

        void IValueTaskSource.GetResult(short token) => GetResult(token);

        public ValueTaskSourceStatus GetStatus(short token) => _core.GetStatus(token);

        public void OnCompleted(Action<object?> continuation, object? state, short token, ValueTaskSourceOnCompletedFlags flags)
        {
            _core.OnCompleted(continuation, state, token, flags);
            Volatile.Read(ref _awaited).SetResult();
        }
    }
}

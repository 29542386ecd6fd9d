using System.Runtime.CompilerServices;
using XCall.Domain;
using XCall.Runtime;
using XCall.Tests.Contracts;
using XCall.Tests.Shared;

namespace XCall.FastProxy.Tests;

/// <summary>Object references, callbacks and activation as frames through an in-memory channel pair.</summary>
public sealed class FramedReferenceTests : ReferenceContractTests, IDisposable
{
    private readonly XCallServer _server;
    private readonly XCallConnection _serverConnection;
    private readonly XCallConnection _client;
    private readonly List<XCallConnection> _others = [];

    public FramedReferenceTests()
    {
        _server = new XCallServer().Add<ICallbacks>(new Callbacks()).AddPerCall<IActivation>(() => new Activation());
        (_client, _serverConnection) = Connect();
        Callbacks = _client.GetService<ICallbacks>();
        Activation = _client.GetService<IActivation>();
    }

    protected override ICallbacks Callbacks { get; }

    protected override IActivation Activation { get; }

    protected override XCallConnection ClientConnection => _client;

    private (XCallConnection Client, XCallConnection Server) Connect()
    {
        (InMemoryChannel clientChannel, InMemoryChannel serverChannel) = InMemoryChannel.CreatePair();
        XCallConnection server = _server.Attach(serverChannel);
        var client = new XCallConnection(clientChannel);
        client.Start();
        return (client, server);
    }

    protected override (ICallbacks Service, IDisposable Connection) OpenSeparate()
    {
        (XCallConnection client, XCallConnection server) = Connect();
        _others.Add(client);
        return (client.GetService<ICallbacks>(), client);
    }

    [Fact]
    public void Server_forgets_its_object_when_the_client_disposes_the_proxy()
    {
        ICounter counter = Callbacks.CreateCounter(1);
        Assert.Equal(1, _serverConnection.ExposedObjectCount);
        Assert.Equal(1, _client.ImportedReferenceCount);
        ((IDisposable)counter).Dispose();
        Assert.True(WaitFor(() => _serverConnection.ExposedObjectCount == 0, () => Callbacks.Echo(null)));
        Assert.Equal(0, _client.ImportedReferenceCount);
    }

    [Fact]
    public void Server_forgets_its_object_when_the_client_collects_the_proxy()
    {
        TouchAndDrop(() => Callbacks.CreateCounter(1));
        Assert.Equal(1, _serverConnection.ExposedObjectCount);
        Assert.True(WaitFor(() => _serverConnection.ExposedObjectCount == 0, () =>
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
            Callbacks.Echo(null);
        }), $"{_serverConnection.ExposedObjectCount} objects still exposed");
    }

    [Fact]
    public void Reference_received_again_while_its_release_travels_stays_usable()
    {
        ICounter first = Callbacks.SharedCounter();
        ((IDisposable)first).Dispose();
        ICounter again = Callbacks.SharedCounter();
        Assert.NotSame(first, again);
        again.Next();
        Assert.Equal(1, _serverConnection.ExposedObjectCount);
    }

    [Fact]
    public void Closing_the_connection_drops_its_references()
    {
        Callbacks.Hold(new Recorder());
        Callbacks.CreateCounter(1);
        Assert.Equal(1, _client.ExposedObjectCount);
        _client.Dispose();
        Assert.Equal(0, _client.ExposedObjectCount);
        Assert.Equal(0, _client.ImportedReferenceCount);
    }

    public void Dispose()
    {
        foreach (XCallConnection other in _others)
        {
            other.Dispose();
        }
        _client.Dispose();
        _server.Dispose();
    }
}

/// <summary>References and exceptions through the domain transport.</summary>
public sealed class DomainReferenceTests : IDisposable
{
    private readonly DomainHost _host = DomainHost.Load(DomainShapesTests.ServicePath, "refs-" + Guid.NewGuid().ToString("N"));
    private readonly Callbacks _target = new();
    private readonly ICallbacks _callbacks;

    public DomainReferenceTests() => _callbacks = _host.Attach<ICallbacks>(_target);

    private sealed class Recorder : ICallback
    {
        public List<int> Reports { get; } = [];

        public int Report(int value)
        {
            Reports.Add(value);
            return value * 10;
        }

        public int Nested(int depth) => depth;
    }

    [Fact]
    public void Callback_object_passes_to_the_target()
    {
        var recorder = new Recorder();
        Assert.Equal(60, _callbacks.CallBack(recorder, 3));
        Assert.Equal([1, 2, 3], recorder.Reports);
        Assert.Equal(70, _callbacks.CallHolder(new CallbackHolder { Callback = recorder }, 7));
        Assert.True(_callbacks.Same(recorder, recorder));
    }

    [Fact]
    public async Task Factory_result_arrives_as_a_domain_proxy_of_its_own()
    {
        ICounter counter = _callbacks.CreateCounter(5);
        Assert.IsAssignableFrom<DomainProxyBase>(counter);
        Assert.Equal(6, counter.Next());
        Assert.Equal(7, await counter.NextAsync());
        ICounter fromTask = await _callbacks.CreateCounterAsync(100);
        Assert.IsAssignableFrom<DomainProxyBase>(fromTask);
        Assert.Equal(101, fromTask.Next());
        Assert.Same(_callbacks.SharedCounter(), _callbacks.SharedCounter());
    }

    [Fact]
    public void Callback_crossing_twice_is_one_proxy_and_comes_home_as_itself()
    {
        var recorder = new Recorder();
        Assert.False(_callbacks.Hold(recorder));
        Assert.True(_callbacks.Hold(recorder));
        Assert.Same(recorder, _callbacks.Echo(recorder));
        Assert.Null(_callbacks.Echo(null));
        ICounter shared = _callbacks.SharedCounter();
        Assert.Same(shared, _callbacks.SharedCounter());
    }

    [Fact]
    public void Callback_inside_data_or_a_list_arrives_as_a_domain_proxy_not_the_object()
    {
        var recorder = new Recorder();
        Assert.False(_callbacks.HoldFromHolder(new CallbackHolder { Name = "h", Callback = recorder }));
        ICallback fromHolder = Assert.IsAssignableFrom<DomainProxyBase>(_target.Held) as ICallback ?? throw new InvalidOperationException();
        Assert.NotSame(recorder, fromHolder);
        Assert.Equal(30, fromHolder.Report(3));
        Assert.Equal([3], recorder.Reports);

        // The same object, now inside a list and beside another: one proxy per object, as for a plain argument.
        Assert.Equal(2, _callbacks.HoldFirst([recorder, new Recorder()]));
        Assert.Same(fromHolder, _target.Held);
        Assert.True(_callbacks.Hold(recorder));
    }

    [Fact]
    public async Task Callback_in_a_dictionary_a_struct_or_a_task_result_is_a_proxy_there_and_itself_back_home()
    {
        var recorder = new Recorder();
        Assert.False(_callbacks.HoldFromDictionary(new Dictionary<string, ICallback> { ["a"] = recorder }));
        DomainProxyBase proxy = Assert.IsAssignableFrom<DomainProxyBase>(_target.Held);
        Assert.True(_callbacks.HoldFromSlot(new CallbackSlot { Id = 1, Callback = recorder })); // the same proxy again
        Assert.Same(proxy, _target.Held);
        CallbackHolder back = await _callbacks.HeldInHolderAsync(); // completes later: copied by the task's copier
        Assert.Equal("held", back.Name);
        Assert.Same(recorder, back.Callback);
    }

    [Fact]
    public void Callback_inside_data_stops_working_and_lets_go_once_the_host_is_disposed()
    {
        var target = new Callbacks();
        DomainHost host = DomainHost.Load(DomainShapesTests.ServicePath, "refs-data-" + Guid.NewGuid().ToString("N"));
        ICallbacks callbacks = host.Attach<ICallbacks>(target);
        WeakReference recorder = HoldInHolder(callbacks);
        ICallback held = target.Held!;
        host.Dispose();
        var ex = Assert.Throws<XCallDisconnectedException>(() => held.Report(1));
        Assert.Contains("domain host was disposed", ex.Message);
        for (int i = 0; i < 20 && recorder.IsAlive; i++)
        {
            GC.Collect();
            GC.WaitForPendingFinalizers();
        }
        Assert.False(recorder.IsAlive, "the proxy the target kept still holds the caller's object");
        GC.KeepAlive(held);
    }

    [MethodImpl(MethodImplOptions.NoInlining)]
    private static WeakReference HoldInHolder(ICallbacks callbacks)
    {
        var recorder = new Recorder();
        callbacks.HoldFromHolder(new CallbackHolder { Callback = recorder });
        return new WeakReference(recorder);
    }

    [Fact]
    public void References_that_crossed_fail_once_the_host_is_disposed()
    {
        using DomainHost host = DomainHost.Load(DomainShapesTests.ServicePath, "refs-closed-" + Guid.NewGuid().ToString("N"));
        ICallbacks callbacks = host.Attach<ICallbacks>(new Callbacks());
        ICounter counter = callbacks.CreateCounter(1);
        Assert.Equal(2, counter.Next());
        host.Dispose();
        var ex = Assert.Throws<XCallDisconnectedException>(() => counter.Next());
        Assert.Contains("domain host was disposed", ex.Message);
    }

    [Fact]
    public void Remote_exception_keeps_inner_exception_and_string_data()
    {
        var ex = Assert.Throws<RemoteInvocationException>(() => _callbacks.Throw("inner"));
        Assert.Equal("System.InvalidOperationException", ex.RemoteTypeName);
        Assert.Equal("value", ex.Data["key"]);
        Assert.False(ex.Data.Contains("number"));
        Assert.Equal("System.ArgumentException", Assert.IsType<RemoteInvocationException>(ex.InnerException).RemoteTypeName);
    }

    [Fact]
    public void Known_framework_exception_is_recreated_as_its_own_type()
    {
        var ex = Assert.Throws<RemoteInvocationException>(() => _callbacks.Throw("KeyNotFoundException"));
        Assert.IsType<KeyNotFoundException>(ex.ToLocalException());
        var aggregate = Assert.Throws<RemoteInvocationException>(() => _callbacks.Throw("aggregate"));
        Assert.Equal(2, aggregate.InnerExceptions.Count);
    }

    public void Dispose() => _host.Dispose();
}

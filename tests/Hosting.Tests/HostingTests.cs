using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;
using Microsoft.Extensions.Logging;

namespace XCall.Hosting.Tests;

public sealed class HostingTests
{
    private static readonly TimeSpan s_wait = TimeSpan.FromSeconds(30);

    private static IHost ServerHost(string address, Gate gate, RecordingLoggerProvider log)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection([new("XCall:Server:Addresses:0", address)]);
        builder.Logging.AddProvider(log);
        builder.Services.AddXCallServer((_, server) => server.Add<IGate>(gate));
        builder.Services.AddHealthChecks().AddXCallHealthChecks();
        return builder.Build();
    }

    private static IHost ClientHost(string address, RecordingLoggerProvider log)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection([new("XCall:Clients:IGate:Address", address)]);
        builder.Logging.AddProvider(log);
        builder.Services.AddXCallClient<IGate>();
        builder.Services.AddHealthChecks().AddXCallHealthChecks();
        return builder.Build();
    }

    [Fact]
    public async Task Stopping_the_server_host_lets_a_call_in_flight_finish_and_refuses_new_calls_and_clients()
    {
        var gate = new Gate();
        using Pair pair = await Pair.StartAsync(gate);
        (string address, IHost server, RecordingLoggerProvider serverLog, IGate proxy) = (pair.Address, pair.Server, pair.ServerLog, pair.Proxy);
        Task<int> call = await CallInFlight(proxy, gate, 21);

        using var shutdownTimeout = new CancellationTokenSource(s_wait);
        Task stop = server.StopAsync(shutdownTimeout.Token);
        await serverLog.Logged(11).WaitAsync(s_wait); // draining: no longer accepting, refusing new calls
        Assert.Contains(serverLog.Entries, e => e.Id.Id == 11 && e.Message.Contains("draining 1 call(s) in flight on 1 connection(s)", StringComparison.Ordinal));

        // A call started after the stop began is refused, not run, on the connection that is still open.
        XCallServerBusyException refused = await Assert.ThrowsAsync<XCallServerBusyException>(() => proxy.PassAsync(1, CancellationToken.None));
        Assert.Contains("the server is stopping", refused.Reason, StringComparison.Ordinal);
        Assert.Equal(1, gate.Calls);
        Assert.ThrowsAny<XCallException>(() => Remote.Open<IGate>(address, new RemoteOptions { Reconnect = false }));
        Assert.False(stop.IsCompleted, "the server stopped while a call was in flight");

        gate.Open();
        Assert.Equal(42, await call.WaitAsync(s_wait)); // the call in flight finished
        await stop.WaitAsync(s_wait); // and the drain ended with it, the client's connection still open
        Assert.Contains(serverLog.Entries, e => e.Id.Id == 12 && e.Message.Contains("Drained", StringComparison.Ordinal));
        Assert.DoesNotContain(serverLog.Entries, e => e.Id.Id == 13);
    }

    [Fact]
    public async Task The_shutdown_timeout_bounds_the_drain_of_a_call_that_does_not_finish()
    {
        var gate = new Gate();
        using Pair pair = await Pair.StartAsync(gate);
        (IHost server, RecordingLoggerProvider serverLog) = (pair.Server, pair.ServerLog);
        Task<int> call = await CallInFlight(pair.Proxy, gate, 1);

        using var shutdownTimeout = new CancellationTokenSource();
        Task stop = server.StopAsync(shutdownTimeout.Token);
        await serverLog.Logged(11).WaitAsync(s_wait);
        Assert.False(stop.IsCompleted, "the server stopped while a call was in flight");
        await shutdownTimeout.CancelAsync(); // the host's shutdown timeout ends

        await stop.WaitAsync(s_wait);
        Assert.Contains(serverLog.Entries, e => e.Id.Id == 13 && e.Message.Contains("with 1 call(s) still in flight", StringComparison.Ordinal));
        await Assert.ThrowsAnyAsync<XCallException>(() => call.WaitAsync(s_wait)); // its connection was closed
        gate.Open();
    }

    [Fact]
    public async Task Connection_events_reach_the_logger_connected_lost_reconnected()
    {
        string address = $"shm://hosting-{Guid.NewGuid():N}";
        var serverLog = new RecordingLoggerProvider();
        var clientLog = new RecordingLoggerProvider();
        IHost server = ServerHost(address, OpenGate(), serverLog);
        await server.StartAsync();
        using IHost client = ClientHost(address, clientLog);
        IGate proxy = client.Services.GetRequiredService<IGate>();
        Assert.Equal(2, await proxy.PassAsync(1, CancellationToken.None));
        Assert.Contains(clientLog.Entries, e => e.Id.Id == 1 && e.Category == "XCall.Hosting" && e.Message == $"Connected to IGate at {address} over shm");

        // No call in flight: the drain is over at once, and the server closes the client's connection.
        await server.StopAsync(new CancellationToken(canceled: true));
        server.Dispose();
        Assert.Contains(serverLog.Entries, e => e.Id.Id == 12 && e.Message.EndsWith("closing 1 connection(s)", StringComparison.Ordinal));
        await clientLog.Logged(2).WaitAsync(s_wait); // lost, reconnecting

        using IHost again = ServerHost(address, OpenGate(), new RecordingLoggerProvider());
        await again.StartAsync();
        Assert.Equal(6, await proxy.PassAsync(3, CancellationToken.None));
        await clientLog.Logged(3).WaitAsync(s_wait); // reconnected
        await again.StopAsync(new CancellationToken(canceled: true));
    }

    [Fact]
    public async Task Health_checks_report_clients_and_the_server_connected_reconnecting_and_stopped()
    {
        using Pair pair = await Pair.StartAsync(OpenGate());
        HealthReport client = await Health(pair.Client);
        Assert.Equal(HealthStatus.Healthy, client.Status);
        Assert.Equal("not used yet (connects on first use)", client.Entries["xcall"].Data["IGate"]);

        Assert.Equal(4, await pair.Proxy.PassAsync(2, CancellationToken.None));
        client = await Health(pair.Client);
        Assert.Equal(HealthStatus.Healthy, client.Status);
        Assert.Equal($"connected to {pair.Address} over shm", client.Entries["xcall"].Data["IGate"]);
        HealthReport server = await ServerHealthOnceIdle(pair.Server);
        Assert.Equal(HealthStatus.Healthy, server.Status);
        Assert.Equal($"serving {pair.Address}: 1 connection(s), 0 call(s) in flight", server.Entries["xcall"].Data["server"]);

        // The server stops (nothing in flight): it reports stopped, the client's link is lost and reconnects.
        await pair.Server.StopAsync(CancellationToken.None);
        server = await Health(pair.Server);
        Assert.Equal(HealthStatus.Unhealthy, server.Status);
        Assert.Equal("server: stopped", server.Entries["xcall"].Description);
        await pair.ClientLog.Logged(2).WaitAsync(s_wait); // lost, reconnecting
        client = await Health(pair.Client);
        Assert.Equal(HealthStatus.Degraded, client.Status);
        Assert.Equal($"lost the link to {pair.Address}; reconnecting", client.Entries["xcall"].Data["IGate"]);

        // A client that cannot connect at all.
        using IHost nobody = ClientHost($"shm://nobody-{Guid.NewGuid():N}", new RecordingLoggerProvider());
        Assert.ThrowsAny<XCallException>(() => nobody.Services.GetRequiredService<IGate>());
        HealthReport failed = await Health(nobody);
        Assert.Equal(HealthStatus.Unhealthy, failed.Status);
        Assert.StartsWith("IGate: could not connect to shm://nobody-", failed.Entries["xcall"].Description, StringComparison.Ordinal);
    }

    [Fact]
    public async Task Health_checks_report_a_draining_server_as_not_serving()
    {
        var gate = new Gate();
        using Pair pair = await Pair.StartAsync(gate);
        Task<int> call = await CallInFlight(pair.Proxy, gate, 1);
        Assert.Equal($"serving {pair.Address}: 1 connection(s), 1 call(s) in flight", (await Health(pair.Server)).Entries["xcall"].Data["server"]);

        Task stop = pair.Server.StopAsync(CancellationToken.None);
        await pair.ServerLog.Logged(11).WaitAsync(s_wait);
        HealthReport draining = await Health(pair.Server);
        Assert.Equal(HealthStatus.Unhealthy, draining.Status);
        Assert.Equal("server: stopping: refusing new calls, draining 1 call(s) in flight", draining.Entries["xcall"].Description);

        gate.Open();
        Assert.Equal(2, await call.WaitAsync(s_wait));
        await stop.WaitAsync(s_wait);
    }

    private static Task<HealthReport> Health(IHost host) => host.Services.GetRequiredService<HealthCheckService>().CheckHealthAsync();

    /// <summary>
    /// The server's health once its last call has left the in-flight table. The reply reaches the client before the
    /// server's side of the call ends (it answers, then gives the call back), so a report read right after the reply
    /// can still count it; nothing signals that end, so the report is read again until it says 0, within s_wait.
    /// </summary>
    private static async Task<HealthReport> ServerHealthOnceIdle(IHost server)
    {
        var clock = System.Diagnostics.Stopwatch.StartNew();
        HealthReport report = await Health(server);
        while (clock.Elapsed < s_wait && !((string)report.Entries["xcall"].Data["server"]).EndsWith(" 0 call(s) in flight", StringComparison.Ordinal))
        {
            await Task.Yield();
            report = await Health(server);
        }
        return report;
    }

    [Fact]
    public void A_client_with_no_server_logs_the_failed_connect_and_one_with_no_address_says_which_setting()
    {
        var log = new RecordingLoggerProvider();
        using IHost client = ClientHost($"shm://nobody-{Guid.NewGuid():N}", log);
        Assert.ThrowsAny<XCallException>(() => client.Services.GetRequiredService<IGate>());
        Assert.Contains(log.Entries, e => e.Id.Id == 7 && e.Message.StartsWith("Could not connect to IGate", StringComparison.Ordinal));

        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Services.AddXCallClient<IGate>();
        using IHost unconfigured = builder.Build();
        Exception error = Assert.ThrowsAny<Exception>(() => unconfigured.Services.GetRequiredService<IGate>());
        Assert.Contains("XCall:Clients:IGate:Address", error.Message, StringComparison.Ordinal);
    }

    /// <summary>A started server host serving <see cref="Gate"/> and a client host of it.</summary>
    private sealed record Pair(string Address, IHost Server, RecordingLoggerProvider ServerLog, IHost Client, RecordingLoggerProvider ClientLog) : IDisposable
    {
        public IGate Proxy => Client.Services.GetRequiredService<IGate>();

        public static async Task<Pair> StartAsync(Gate gate)
        {
            string address = $"shm://hosting-{Guid.NewGuid():N}";
            var serverLog = new RecordingLoggerProvider();
            IHost server = ServerHost(address, gate, serverLog);
            await server.StartAsync();
            var clientLog = new RecordingLoggerProvider();
            return new Pair(address, server, serverLog, ClientHost(address, clientLog), clientLog);
        }

        public void Dispose()
        {
            Client.Dispose();
            Server.Dispose();
        }
    }

    /// <summary>A call that has reached the server's <paramref name="gate"/> and waits there.</summary>
    private static async Task<Task<int>> CallInFlight(IGate proxy, Gate gate, int value)
    {
        Task<int> call = proxy.PassAsync(value, CancellationToken.None);
        await gate.Entered.WaitAsync(s_wait);
        return call;
    }

    private static Gate OpenGate()
    {
        var gate = new Gate();
        gate.Open();
        return gate;
    }
}

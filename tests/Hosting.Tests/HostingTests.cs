using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.DependencyInjection;
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
        return builder.Build();
    }

    private static IHost ClientHost(string address, RecordingLoggerProvider log)
    {
        HostApplicationBuilder builder = Host.CreateEmptyApplicationBuilder(new HostApplicationBuilderSettings());
        builder.Configuration.AddInMemoryCollection([new("XCall:Clients:IGate:Address", address)]);
        builder.Logging.AddProvider(log);
        builder.Services.AddXCallClient<IGate>();
        return builder.Build();
    }

    [Fact]
    public async Task Stopping_the_server_host_lets_a_call_in_flight_finish_and_refuses_new_clients()
    {
        string address = $"shm://hosting-{Guid.NewGuid():N}";
        var gate = new Gate();
        var serverLog = new RecordingLoggerProvider();
        using IHost server = ServerHost(address, gate, serverLog);
        await server.StartAsync();
        using IHost client = ClientHost(address, new RecordingLoggerProvider());
        IGate proxy = client.Services.GetRequiredService<IGate>();

        Task<int> call = proxy.PassAsync(21, CancellationToken.None);
        await gate.Entered.WaitAsync(s_wait);
        using var shutdownTimeout = new CancellationTokenSource(s_wait);
        Task stop = server.StopAsync(shutdownTimeout.Token);
        await serverLog.Logged(11).WaitAsync(s_wait); // draining: no longer accepting
        Assert.ThrowsAny<XCallException>(() => Remote.Open<IGate>(address, new RemoteOptions { Reconnect = false }));
        Assert.False(stop.IsCompleted, "the server stopped while a client connection was open");

        gate.Open();
        Assert.Equal(42, await call.WaitAsync(s_wait)); // the call in flight finished
        client.Dispose(); // the client closes its connection: the drain ends
        await stop.WaitAsync(s_wait);
        Assert.Contains(serverLog.Entries, e => e.Id.Id == 12 && e.Message.Contains("Drained", StringComparison.Ordinal));
        Assert.DoesNotContain(serverLog.Entries, e => e.Id.Id == 13);
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

        // A shutdown timeout already over: the server closes the open connection instead of draining.
        await server.StopAsync(new CancellationToken(canceled: true));
        server.Dispose();
        Assert.Contains(serverLog.Entries, e => e.Id.Id == 13);
        await clientLog.Logged(2).WaitAsync(s_wait); // lost, reconnecting

        using IHost again = ServerHost(address, OpenGate(), new RecordingLoggerProvider());
        await again.StartAsync();
        Assert.Equal(6, await proxy.PassAsync(3, CancellationToken.None));
        await clientLog.Logged(3).WaitAsync(s_wait); // reconnected
        await again.StopAsync(new CancellationToken(canceled: true));
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

    private static Gate OpenGate()
    {
        var gate = new Gate();
        gate.Open();
        return gate;
    }
}

using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using System.Diagnostics.Tracing;
using XCall.Diagnostics;
using XCall.Tests.Contracts;

namespace XCall.FastProxy.Tests;

/// <summary>The XCall event source and meter report each framed call with its method and payload sizes.</summary>
[Collection(nameof(TelemetryTests))]
public sealed class TelemetryTests
{
    [Fact]
    public void Event_source_reports_methods_sides_and_bytes()
    {
        using var listener = new CallListener();
        using var server = new XCallServer().Add<IShapes>(new Shapes());
        string name = "tele-" + Guid.NewGuid().ToString("N");
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair(name);
        server.Attach(s);
        using var client = new Runtime.XCallConnection(c);
        client.Start();
        IShapes shapes = client.GetService<IShapes>();
        string marker = "tele-" + Guid.NewGuid().ToString("N")[..8];
        for (int i = 0; i < 10; i++)
        {
            shapes.Add(i, marker.Length);
        }
        for (int i = 0; i < 5; i++)
        {
            shapes.Echo("hola");
        }
        server.Dispose();

        // The server reports a call just after its reply went out: wait for the last reports to arrive.
        bool Mine(CallEvent e) => e.Endpoint.StartsWith($"mem://{name}", StringComparison.Ordinal);
        Assert.True(listener.WaitFor(events => events.Count(Mine) >= 30, TimeSpan.FromSeconds(30)), "not all 30 events arrived");
        var mine = listener.Events.Where(Mine).ToList();
        var adds = mine.Where(e => e.Method == "Add").ToList();
        var echoes = mine.Where(e => e.Method == "Echo").ToList();
        Assert.Equal(10, adds.Count(e => e.Side == "client"));
        Assert.Equal(10, adds.Count(e => e.Side == "server"));
        Assert.Equal(5, echoes.Count(e => e.Side == "client"));
        Assert.Equal(5, echoes.Count(e => e.Side == "server"));
        Assert.All(adds, e => Assert.Equal("XCall.Tests.Contracts.IShapes", e.Contract));
        Assert.All(adds, e => Assert.Equal((8L, 4L), (e.RequestBytes, e.ReplyBytes)));
        Assert.All(echoes, e => Assert.Equal((12L, 12L), (e.RequestBytes, e.ReplyBytes)));
        Assert.All(adds.Where(e => e.Side == "client"), e => Assert.True(e.TransportNanoseconds > 0));
        Assert.All(adds, e => Assert.False(e.Failed));
    }

    [Fact]
    public void Meter_counts_calls_per_method()
    {
        var counts = new ConcurrentDictionary<string, long>();
        using var serverDone = new ManualResetEventSlim();
        using var meterListener = new MeterListener();
        meterListener.InstrumentPublished = (instrument, l) =>
        {
            if (instrument.Meter.Name == XCallMetrics.MeterName && instrument.Name == "xcall.calls")
            {
                l.EnableMeasurementEvents(instrument);
            }
        };
        meterListener.SetMeasurementEventCallback<long>((_, value, tags, _) =>
        {
            string method = "", side = "";
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                if (tag.Key == "method") method = (string)tag.Value!;
                if (tag.Key == "side") side = (string)tag.Value!;
            }
            if (counts.AddOrUpdate($"{method}/{side}", value, (_, v) => v + value) >= 7 && $"{method}/{side}" == "Next/server")
            {
                serverDone.Set();
            }
        });
        meterListener.Start();

        using var server = new XCallServer().Add<IShapes>(new Shapes());
        (InMemoryChannel c, InMemoryChannel s) = InMemoryChannel.CreatePair();
        server.Attach(s);
        using var client = new Runtime.XCallConnection(c);
        client.Start();
        IShapes shapes = client.GetService<IShapes>();
        for (int i = 0; i < 7; i++)
        {
            shapes.Next(Color.Red);
        }
        // The server records a call just after its reply went out: wait for the last one.
        Assert.True(serverDone.Wait(TimeSpan.FromSeconds(30)), "the server's measurements did not all arrive");
        server.Dispose();
        Assert.Equal(7, counts.GetValueOrDefault("Next/client"));
        Assert.Equal(7, counts.GetValueOrDefault("Next/server"));
    }

    private sealed record CallEvent(string Contract, string Method, string Side, string Endpoint, long RequestBytes, long ReplyBytes, long TransportNanoseconds, bool Failed);

    private sealed class CallListener : EventListener
    {
        public ConcurrentQueue<CallEvent> Events { get; } = new();

        /// <summary>Waits until <paramref name="done"/> holds for the events seen so far.</summary>
        public bool WaitFor(Func<IEnumerable<CallEvent>, bool> done, TimeSpan timeout)
        {
            long deadline = Environment.TickCount64 + (long)timeout.TotalMilliseconds;
            lock (Events)
            {
                while (!done(Events))
                {
                    long left = deadline - Environment.TickCount64;
                    if (left <= 0)
                    {
                        return false;
                    }
                    Monitor.Wait(Events, (int)left);
                }
                return true;
            }
        }

        protected override void OnEventSourceCreated(EventSource source)
        {
            if (source.Name == "XCall")
            {
                EnableEvents(source, EventLevel.Informational, XCallEventSource.Keywords.Calls);
            }
        }

        protected override void OnEventWritten(EventWrittenEventArgs e)
        {
            if (e.EventId != XCallEventSource.CallCompletedId || e.Payload is null)
            {
                return;
            }
            Events.Enqueue(new CallEvent((string)e.Payload[0]!, (string)e.Payload[1]!, (string)e.Payload[2]!, (string)e.Payload[3]!, (long)e.Payload[4]!, (long)e.Payload[5]!, (long)e.Payload[7]!, (bool)e.Payload[9]!));
            lock (Events)
            {
                Monitor.PulseAll(Events);
            }
        }
    }
}

/// <summary>Telemetry tests count process-wide events, so they run alone.</summary>
[CollectionDefinition(nameof(TelemetryTests), DisableParallelization = true)]
public sealed class TelemetryCollection;

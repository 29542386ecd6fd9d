using System.Collections.Concurrent;
using System.Diagnostics.Metrics;
using XCall.Profile.Tests.Support;

namespace XCall.Profile.Tests;

/// <summary>The XCall Meter as an in-process MeterListener sees it.</summary>
[Collection(InProcessCallsCollection.Name)]
public sealed class CallMetricsTests
{
    [Fact]
    public async Task Framed_calls_are_counted_and_sized_per_contract_method_and_side()
    {
        var calls = new ConcurrentDictionary<(string? Contract, string? Method, string? Side), long>();
        var requestBytes = new ConcurrentQueue<(string? Method, string? Side, double Bytes)>();
        var allCounted = new TaskCompletionSource(TaskCreationOptions.RunContinuationsAsynchronously);
        using var listener = new MeterListener
        {
            InstrumentPublished = (instrument, l) =>
            {
                if (instrument.Meter.Name == "XCall" && instrument.Name is "xcall.calls" or "xcall.request.bytes")
                {
                    l.EnableMeasurementEvents(instrument);
                }
            },
        };
        void Record(Instrument instrument, double value, ReadOnlySpan<KeyValuePair<string, object?>> tags)
        {
            string? contract = null, method = null, side = null;
            foreach (KeyValuePair<string, object?> tag in tags)
            {
                switch (tag.Key)
                {
                    case "contract": contract = tag.Value as string; break;
                    case "method": method = tag.Value as string; break;
                    case "side": side = tag.Value as string; break;
                }
            }
            if (instrument.Name == "xcall.calls")
            {
                calls.AddOrUpdate((contract, method, side), (long)value, (_, sum) => sum + (long)value);
                if (calls.Values.Sum() >= 30)
                {
                    allCounted.TrySetResult();
                }
            }
            else
            {
                requestBytes.Enqueue((method, side, value));
            }
        }
        listener.SetMeasurementEventCallback<long>((i, v, t, _) => Record(i, v, t));
        listener.SetMeasurementEventCallback<int>((i, v, t, _) => Record(i, v, t));
        listener.SetMeasurementEventCallback<double>((i, v, t, _) => Record(i, v, t));
        listener.Start();

        using (var connection = new ShapesConnection("metrics-" + Guid.NewGuid().ToString("N")))
        {
            for (int i = 0; i < 10; i++)
            {
                connection.Shapes.Add(i, 1);
            }
            for (int i = 0; i < 5; i++)
            {
                connection.Shapes.Echo("hola");
            }
            await allCounted.Task.WaitAsync(TimeSpan.FromSeconds(10));
        }

        const string Contract = "XCall.Tests.Contracts.IShapes";
        Assert.Equal(10, calls.GetValueOrDefault((Contract, "Add", "client")));
        Assert.Equal(10, calls.GetValueOrDefault((Contract, "Add", "server")));
        Assert.Equal(5, calls.GetValueOrDefault((Contract, "Echo", "client")));
        Assert.Equal(5, calls.GetValueOrDefault((Contract, "Echo", "server")));
        Assert.Equal(30, calls.Values.Sum());
        Assert.Equal(Enumerable.Repeat(8.0, 10), requestBytes.Where(r => r is { Method: "Add", Side: "client" }).Select(r => r.Bytes));
    }
}

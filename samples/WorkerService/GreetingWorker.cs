using Microsoft.Extensions.Configuration;
using Microsoft.Extensions.Hosting;

namespace XCall.Samples.WorkerService;

/// <summary>The client's work: <c>Greetings:Count</c> calls through the injected proxy, printed, then the host stops.</summary>
public sealed class GreetingWorker(IGreeter greeter, IConfiguration configuration, IHostApplicationLifetime lifetime) : BackgroundService
{
    protected override async Task ExecuteAsync(CancellationToken stoppingToken)
    {
        int count = configuration.GetValue("Greetings:Count", 3);
        for (int i = 0; i < count; i++)
        {
            Console.WriteLine(await greeter.GreetAsync($"worker {i}", stoppingToken).ConfigureAwait(false));
        }
        lifetime.StopApplication();
    }
}

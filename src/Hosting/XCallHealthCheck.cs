using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;
using Microsoft.Extensions.Hosting;

namespace XCall.Hosting;

/// <summary>
/// The health of the XCall clients and server of a service provider (<see cref="XCallHealthChecksBuilderExtensions.AddXCallHealthChecks"/>):
/// healthy while every client used so far is connected and the server serves; degraded while a client's link is lost
/// and it reconnects; the registration's failure status when a client could not connect or lost its link for good,
/// or the server is not serving (not started yet, or stopping: draining its calls in flight).
/// </summary>
internal sealed class XCallHealthCheck(IServiceProvider services) : IHealthCheck
{
    public Task<HealthCheckResult> CheckHealthAsync(HealthCheckContext context, CancellationToken cancellationToken = default)
    {
        var status = HealthStatus.Healthy;
        var parts = new List<string>();
        var data = new Dictionary<string, object>(StringComparer.Ordinal);
        void Report(string name, HealthStatus health, string text)
        {
            status = (HealthStatus)Math.Min((int)status, (int)health); // Unhealthy < Degraded < Healthy
            parts.Add($"{name}: {text}");
            data[name] = text;
        }

        if (services.GetService<XCallClientStates>() is { } clients)
        {
            foreach ((string contract, XCallClientStates.Client client) in clients.Clients.OrderBy(c => c.Key, StringComparer.Ordinal))
            {
                (HealthStatus health, string text) = client switch
                {
                    { Error: { } error } => (HealthStatus.Unhealthy, $"could not connect to {client.Address}: {error.Message}"),
                    { State: { } state } => state() switch
                    {
                        ConnectionState.Connected => (HealthStatus.Healthy, $"connected to {client.Address} over {client.Transport}"),
                        ConnectionState.Disconnected => (HealthStatus.Degraded, $"lost the link to {client.Address}; reconnecting"),
                        _ => (HealthStatus.Unhealthy, $"the link to {client.Address} is closed"),
                    },
                    _ => (HealthStatus.Healthy, "not used yet (connects on first use)"),
                };
                Report(contract, health, text);
            }
        }
        foreach (XCallServerHost server in services.GetServices<IHostedService>().OfType<XCallServerHost>())
        {
            (XCallServerHost.Phase phase, int connections, int calls) = server.Snapshot();
            (HealthStatus health, string text) = phase switch
            {
                XCallServerHost.Phase.Serving => (HealthStatus.Healthy, $"serving {string.Join(", ", server.Addresses)}: {connections} connection(s), {calls} call(s) in flight"),
                XCallServerHost.Phase.Draining => (HealthStatus.Unhealthy, $"stopping: refusing new calls, draining {calls} call(s) in flight"),
                XCallServerHost.Phase.Stopped => (HealthStatus.Unhealthy, "stopped"),
                _ => (HealthStatus.Unhealthy, "not serving yet"),
            };
            Report("server", health, text);
        }

        if (parts.Count == 0)
        {
            return Task.FromResult(HealthCheckResult.Healthy("no XCall client or server registered"));
        }
        string description = string.Join("; ", parts);
        return Task.FromResult(status == HealthStatus.Unhealthy
            ? new HealthCheckResult(context.Registration.FailureStatus, description, data: data)
            : new HealthCheckResult(status, description, data: data));
    }
}

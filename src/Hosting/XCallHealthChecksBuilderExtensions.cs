using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Diagnostics.HealthChecks;

namespace XCall.Hosting;

/// <summary>XCall in ASP.NET Core's and the Generic Host's health checks (<c>services.AddHealthChecks()</c>).</summary>
public static class XCallHealthChecksBuilderExtensions
{
    /// <summary>
    /// Adds a health check of the clients (<see cref="XCallServiceCollectionExtensions.AddXCallClient{T}"/>) and the
    /// server (<see cref="XCallServiceCollectionExtensions.AddXCallServer"/>) of this service provider: healthy while every
    /// client used so far is connected and the server serves; degraded while a client's lost link is being
    /// reconnected; <paramref name="failureStatus"/> when a client could not connect or its link is closed, or the server
    /// is not serving (not started, or stopping and draining its calls). The result's data has one entry per client
    /// (by contract name) and <c>server</c>.
    /// </summary>
    public static IHealthChecksBuilder AddXCallHealthChecks(
        this IHealthChecksBuilder builder,
        string name = "xcall",
        HealthStatus failureStatus = HealthStatus.Unhealthy,
        IEnumerable<string>? tags = null)
    {
        ArgumentNullException.ThrowIfNull(builder);
        return builder.Add(new HealthCheckRegistration(name, provider => new XCallHealthCheck(provider), failureStatus, tags));
    }
}

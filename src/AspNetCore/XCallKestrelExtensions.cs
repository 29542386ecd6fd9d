using Microsoft.AspNetCore.Connections;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Server.Kestrel.Core;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.DependencyInjection.Extensions;
using XCall.Streams;

namespace XCall.AspNetCore;

/// <summary>Kestrel over XCall: <c>builder.WebHost.UseXCallTransport()</c>, then <c>kestrel.ListenXCall("shm://name")</c>.</summary>
public static class XCallKestrelExtensions
{
    /// <summary>
    /// Adds the XCall transport to Kestrel beside its socket transport: endpoints added with
    /// <see cref="ListenXCall"/> are served over XCall, all others as before.
    /// </summary>
    public static IWebHostBuilder UseXCallTransport(this IWebHostBuilder builder, XCallStreamOptions? options = null) =>
        builder.ConfigureServices(services => services.TryAddEnumerable(
            ServiceDescriptor.Singleton<IConnectionListenerFactory>(new XCallConnectionListenerFactory(options))));

    /// <summary>Listens on an XCall address (<c>shm://name</c>, or <c>tcp://host:port</c>); needs <see cref="UseXCallTransport"/>.</summary>
    /// <exception cref="FormatException"><paramref name="address"/> is not an XCall address.</exception>
    public static void ListenXCall(this KestrelServerOptions kestrel, string address, Action<ListenOptions>? configure = null) =>
        kestrel.Listen(new XCallEndPoint(address), configure ?? (_ => { }));
}

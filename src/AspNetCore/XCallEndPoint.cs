using System.Net;

namespace XCall.AspNetCore;

/// <summary>An XCall address (<c>shm://name</c> or <c>tcp://host:port</c>) as an endpoint Kestrel can listen on.</summary>
public sealed class XCallEndPoint : EndPoint
{
    /// <summary>Creates the endpoint of <paramref name="address"/>.</summary>
    /// <exception cref="FormatException"><paramref name="address"/> is not an XCall address.</exception>
    public XCallEndPoint(string address)
    {
        Address = XCallAddress.Parse(address);
    }

    /// <summary>The address.</summary>
    public XCallAddress Address { get; }

    /// <inheritdoc/>
    public override string ToString() => Address.ToString();
}

namespace XCall.Tests;

public sealed class XCallAddressTests
{
    [Theory]
    [InlineData("shm://calc", "shm", null, 0, "calc")]
    [InlineData("domain://plugins.a", "domain", null, 0, "plugins.a")]
    [InlineData("tcp://10.1.2.3:5000/calc", "tcp", "10.1.2.3", 5000, "calc")]
    [InlineData("tcp://host-a:0/", "tcp", "host-a", 0, "")]
    [InlineData("tcp://[::1]:7/x_y", "tcp", "::1", 7, "x_y")]
    [InlineData("TCP://localhost:1/n", "tcp", "localhost", 1, "n")]
    public void Parses_every_scheme(string text, string scheme, string? host, int port, string name)
    {
        XCallAddress a = XCallAddress.Parse(text);
        Assert.Equal((scheme, host, port, name), (a.Scheme, a.Host, a.Port, a.Name));
        Assert.Equal(a, XCallAddress.Parse(a.ToString()));
    }

    [Theory]
    [InlineData("calc", "expected domain://name")]
    [InlineData("udp://x", "unknown scheme 'udp'")]
    [InlineData("shm://", "shm://name")]
    [InlineData("shm://a/b", "shm://name")]
    [InlineData("shm://a b", "may hold only")]
    [InlineData("tcp://host/calc", "tcp://host:port/name")]
    [InlineData("tcp://host:70000/calc", "port from 0 to 65535")]
    [InlineData("tcp://host:-1/calc", "port from 0 to 65535")]
    public void Rejects_malformed_addresses_with_the_reason(string text, string reason)
    {
        var ex = Assert.Throws<FormatException>(() => XCallAddress.Parse(text));
        Assert.Contains(reason, ex.Message);
    }

    [Fact]
    public void Loopback_and_local_names_are_this_machine()
    {
        Assert.True(Remote.IsThisMachine("127.0.0.1"));
        Assert.True(Remote.IsThisMachine("::1"));
        Assert.True(Remote.IsThisMachine("localhost"));
        Assert.True(Remote.IsThisMachine(System.Net.Dns.GetHostName()));
        Assert.False(Remote.IsThisMachine("192.0.2.1"));
        Assert.False(Remote.IsThisMachine("some-other-host.invalid"));
    }
}

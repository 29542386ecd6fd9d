using XCall.Marshal;
using XCall.Runtime;
using XCall.Runtime.CompilerServices;

namespace XCall.FastProxy.Tests;

/// <summary>
/// <see cref="ProxyBase"/>'s PutArgument, which a generated one-way proxy uses for unmanaged arguments: the bytes are those a
/// <see cref="MarshalWriter"/> writes for the same values one after the other (a struct's padding cleared, whatever the
/// stack held), and a value that does not fit is refused.
/// </summary>
public sealed class PutArgumentTests
{
    private struct Padded
    {
        public byte A;
        public long B;
        public short C;
    }

    [Fact]
    public void Arguments_put_at_their_offsets_are_the_bytes_a_marshal_writer_writes()
    {
        var padded = new Padded { A = 7, B = -3, C = 1234 };
        int size = sizeof(int) + sizeof(double) + sizeof(DayOfWeek) + sizeof(bool) + System.Runtime.CompilerServices.Unsafe.SizeOf<Padded>();

        byte[] expected = new byte[size];
        var writer = new MarshalWriter(expected);
        writer.Write(42);
        writer.Write(2.5);
        writer.Write(DayOfWeek.Friday);
        writer.Write(true);
        writer.Write(padded);

        byte[] put = new byte[size];
        Array.Fill(put, (byte)0xEE); // what a stack without zeroed locals may hold
        int offset = 0;
        Probe.Put(put, offset, 42);
        Probe.Put(put, offset += sizeof(int), 2.5);
        Probe.Put(put, offset += sizeof(double), DayOfWeek.Friday);
        Probe.Put(put, offset += sizeof(DayOfWeek), true);
        Probe.Put(put, offset += sizeof(bool), padded);

        Assert.Equal(expected, put);
    }

    [Theory]
    [InlineData(5)]
    [InlineData(9)]
    [InlineData(-1)]
    public void A_value_past_the_end_of_the_arguments_is_refused_and_nothing_is_written(int offset)
    {
        byte[] arguments = new byte[8];
        Assert.Throws<ArgumentOutOfRangeException>(() => Probe.Put(arguments, offset, 1L << 40));
        Assert.All(arguments, b => Assert.Equal(0, b));
    }

    /// <summary>Reaches the protected helper as a generated proxy does; never made.</summary>
    private sealed class Probe : ProxyBase
    {
        private Probe()
            : base(null!, 0, null!)
        {
        }

        public static void Put<T>(Span<byte> arguments, int offset, T value) where T : unmanaged => PutArgument(arguments, offset, value);
    }
}

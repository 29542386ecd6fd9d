using XCall.Transport.Shm.Ring;

namespace XCall.Transport.Shm.Tests;

/// <summary><see cref="SmallCopy"/>: the inlined copy of a small call's bytes writes exactly them, and no byte past them.</summary>
public sealed class SmallCopyTests
{
    [Fact]
    public void Every_length_up_to_the_limit_and_past_it_copies_exactly_its_bytes()
    {
        var random = new Random(7);
        for (int length = 0; length <= SmallCopy.MaxLength + 9; length++)
        {
            byte[] source = new byte[length];
            random.NextBytes(source);
            byte[] destination = new byte[SmallCopy.MaxLength + 24];
            Array.Fill(destination, (byte)0xA5);

            // From an offset that is not a multiple of 8, so unaligned reads and writes are used.
            SmallCopy.Copy(source, destination.AsSpan(3));

            Assert.Equal(source, destination[3..(3 + length)]);
            Assert.All(destination[..3], b => Assert.Equal(0xA5, b));
            Assert.All(destination[(3 + length)..], b => Assert.Equal(0xA5, b));
        }
    }

    [Fact]
    public void A_destination_shorter_than_the_source_throws_as_CopyTo_does_and_is_left_as_it_was()
    {
        byte[] destination = [1, 2, 3];
        Assert.Throws<ArgumentException>(() => SmallCopy.Copy(new byte[4], destination));
        Assert.Equal([1, 2, 3], destination);
    }
}

namespace XCall.Marshal.Tests;

/// <summary>
/// An <see cref="IBufferWriter{T}"/> that hands out tiny spans: at most <c>maxSpan</c> bytes per
/// <see cref="GetSpan"/>, but never less than the size hint. Every span is a fresh array filled with a
/// poison byte, and <see cref="Advance"/> copies the committed prefix out and invalidates the span, so a
/// writer that keeps using a span after committing it, or commits more than it was given, is caught.
/// </summary>
public sealed class TinySpanBufferWriter : IBufferWriter<byte>
{
    private const byte Poison = 0xEE;
    private readonly int _maxSpan;
    private readonly Random? _random;
    private readonly ArrayBufferWriter<byte> _committed = new();
    private byte[]? _current;

    /// <param name="maxSpan">Largest span handed out when the hint allows it.</param>
    /// <param name="random">When given, each span has a random size in [max(1, hint), max(maxSpan, hint)];
    /// otherwise exactly max(maxSpan, hint).</param>
    public TinySpanBufferWriter(int maxSpan, Random? random = null)
    {
        ArgumentOutOfRangeException.ThrowIfLessThan(maxSpan, 1);
        _maxSpan = maxSpan;
        _random = random;
    }

    public int GetSpanCalls { get; private set; }

    public int LargestSpanHandedOut { get; private set; }

    public ReadOnlySpan<byte> WrittenSpan => _committed.WrittenSpan;

    public byte[] ToArray() => _committed.WrittenSpan.ToArray();

    public void Advance(int count)
    {
        if (count < 0 || _current is null || count > _current.Length)
        {
            throw new InvalidOperationException(
                $"Advance({count}) past the {(_current?.Length).GetValueOrDefault()} byte(s) of the last span handed out.");
        }
        _committed.Write(_current.AsSpan(0, count));
        Array.Fill(_current, Poison);
        _current = null;
    }

    public Memory<byte> GetMemory(int sizeHint = 0)
    {
        ArgumentOutOfRangeException.ThrowIfNegative(sizeHint);
        GetSpanCalls++;
        int min = Math.Max(1, sizeHint);
        int max = Math.Max(_maxSpan, sizeHint);
        int size = _random is null ? max : _random.Next(min, max + 1);
        if (_current is not null)
        {
            // The previous span was not committed: a well-behaved writer must not touch it any more.
            Array.Fill(_current, Poison);
        }
        _current = new byte[size];
        Array.Fill(_current, Poison);
        LargestSpanHandedOut = Math.Max(LargestSpanHandedOut, size);
        return _current;
    }

    public Span<byte> GetSpan(int sizeHint = 0) => GetMemory(sizeHint).Span;
}

namespace XCall.Marshal.Tests;

/// <summary>
/// An <see cref="IMarshalInput"/> that serves a message in chunks of random small sizes. Each chunk is a
/// fresh copy, and the chunk handed out before (the first chunk included) is overwritten with a poison
/// byte when the reader asks for the next one, as a ring transport would reuse it: a reader that kept
/// reading a released chunk would see garbage.
/// </summary>
public sealed class ChunkedInput : IMarshalInput
{
    private const byte Poison = 0xCD;
    private readonly byte[] _data;
    private readonly Random _random;
    private readonly int _minChunk;
    private readonly int _maxChunk;
    private readonly byte[] _trailingGarbage;
    private int _offset;
    private byte[] _current;
    private bool _garbageServed;

    /// <param name="data">The whole message.</param>
    /// <param name="firstLength">How many bytes go in <see cref="First"/>.</param>
    /// <param name="random">Source of chunk sizes.</param>
    /// <param name="maxChunk">Largest chunk (at least 1).</param>
    /// <param name="trailingGarbage">Bytes served after the message (a transport ring holding the start of
    /// the next message); the reader must not consume them.</param>
    /// <param name="minChunk">Smallest chunk.</param>
    public ChunkedInput(byte[] data, int firstLength, Random random, int maxChunk, byte[]? trailingGarbage = null, int minChunk = 1)
    {
        _data = data;
        _random = random;
        _minChunk = minChunk;
        _maxChunk = Math.Max(minChunk, maxChunk);
        _trailingGarbage = trailingGarbage ?? [];
        _current = data.AsSpan(0, firstLength).ToArray();
        _offset = firstLength;
        First = _current;
    }

    /// <summary>The first chunk, to pass to the reader's constructor.</summary>
    public byte[] First { get; }

    public int Calls { get; private set; }

    public bool Exhausted => _offset >= _data.Length;

    public ReadOnlySpan<byte> NextChunk()
    {
        Calls++;
        Array.Fill(_current, Poison);
        if (_offset >= _data.Length)
        {
            if (!_garbageServed && _trailingGarbage.Length > 0)
            {
                _garbageServed = true;
                _current = (byte[])_trailingGarbage.Clone();
                return _current;
            }
            _current = [];
            return default;
        }
        int n = Math.Min(_random.Next(_minChunk, _maxChunk + 1), _data.Length - _offset);
        byte[] chunk = new byte[n + (_offset + n == _data.Length ? _trailingGarbage.Length : 0)];
        _data.AsSpan(_offset, n).CopyTo(chunk);
        if (chunk.Length > n)
        {
            // The last chunk of the message also carries bytes that follow it in the ring.
            _trailingGarbage.CopyTo(chunk, n);
            _garbageServed = true;
        }
        _offset += n;
        _current = chunk;
        return chunk;
    }
}

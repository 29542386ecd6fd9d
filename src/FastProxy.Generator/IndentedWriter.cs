using System.Text;

namespace XCall.Generator;

/// <summary>Builds generated source line by line with indentation.</summary>
internal sealed class IndentedWriter
{
    private readonly StringBuilder _text = new();
    private int _indent;

    public IndentedWriter Line(string line = "")
    {
        if (line.Length > 0)
        {
            _text.Append(' ', _indent * 4);
        }
        _text.Append(line).Append('\n');
        return this;
    }

    public IndentedWriter Open(string line)
    {
        Line(line);
        Line("{");
        _indent++;
        return this;
    }

    public IndentedWriter Close(string suffix = "")
    {
        _indent--;
        return Line("}" + suffix);
    }

    public override string ToString() => _text.ToString();
}

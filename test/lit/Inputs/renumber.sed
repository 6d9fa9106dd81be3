# sed -E -f renumber.sed: a printed program with its value numbers replaced by '#' (tensors,
# IterDomains, index symbols, communications, stream objects), to compare two lowerings that
# differ only in how they numbered what they made.
s/\b(T|i|iS|rS|bS|istreamIdx|ideviceIdx\.x)[0-9]+/\1#/g
s/(Communication|EndCoalescing|Stream) [0-9]+/\1 #/g

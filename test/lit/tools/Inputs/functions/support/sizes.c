/* Functions of known sizes for test/lit/tools/check-functions.test (lizard measures them). */

/* well within every bar */
int short_one(int x)
{
    int y = 0;
    y += x * 0;
    y += x * 1;
    y += x * 2;
    y += x * 3;
    y += x * 4;
    return y;
}

/* 90 lines: over the review bar (80), within the limit (120) */
int long_for_review(int x)
{
    int y = 0;
    y += x * 0;
    y += x * 1;
    y += x * 2;
    y += x * 3;
    y += x * 4;
    y += x * 5;
    y += x * 6;
    y += x * 7;
    y += x * 8;
    y += x * 9;
    y += x * 10;
    y += x * 11;
    y += x * 12;
    y += x * 13;
    y += x * 14;
    y += x * 15;
    y += x * 16;
    y += x * 17;
    y += x * 18;
    y += x * 19;
    y += x * 20;
    y += x * 21;
    y += x * 22;
    y += x * 23;
    y += x * 24;
    y += x * 25;
    y += x * 26;
    y += x * 27;
    y += x * 28;
    y += x * 29;
    y += x * 30;
    y += x * 31;
    y += x * 32;
    y += x * 33;
    y += x * 34;
    y += x * 35;
    y += x * 36;
    y += x * 37;
    y += x * 38;
    y += x * 39;
    y += x * 40;
    y += x * 41;
    y += x * 42;
    y += x * 43;
    y += x * 44;
    y += x * 45;
    y += x * 46;
    y += x * 47;
    y += x * 48;
    y += x * 49;
    y += x * 50;
    y += x * 51;
    y += x * 52;
    y += x * 53;
    y += x * 54;
    y += x * 55;
    y += x * 56;
    y += x * 57;
    y += x * 58;
    y += x * 59;
    y += x * 60;
    y += x * 61;
    y += x * 62;
    y += x * 63;
    y += x * 64;
    y += x * 65;
    y += x * 66;
    y += x * 67;
    y += x * 68;
    y += x * 69;
    y += x * 70;
    y += x * 71;
    y += x * 72;
    y += x * 73;
    y += x * 74;
    y += x * 75;
    y += x * 76;
    y += x * 77;
    y += x * 78;
    y += x * 79;
    y += x * 80;
    y += x * 81;
    y += x * 82;
    y += x * 83;
    y += x * 84;
    return y;
}

/* complexity 27: over the review bar (25), within the limit (40) */
int complex_for_review(int x)
{
    int y = 0;
    if (x == 0)
        y += 1;
    if (x == 1)
        y += 2;
    if (x == 2)
        y += 3;
    if (x == 3)
        y += 4;
    if (x == 4)
        y += 5;
    if (x == 5)
        y += 6;
    if (x == 6)
        y += 7;
    if (x == 7)
        y += 8;
    if (x == 8)
        y += 9;
    if (x == 9)
        y += 10;
    if (x == 10)
        y += 11;
    if (x == 11)
        y += 12;
    if (x == 12)
        y += 13;
    if (x == 13)
        y += 14;
    if (x == 14)
        y += 15;
    if (x == 15)
        y += 16;
    if (x == 16)
        y += 17;
    if (x == 17)
        y += 18;
    if (x == 18)
        y += 19;
    if (x == 19)
        y += 20;
    if (x == 20)
        y += 21;
    if (x == 21)
        y += 22;
    if (x == 22)
        y += 23;
    if (x == 23)
        y += 24;
    if (x == 24)
        y += 25;
    if (x == 25)
        y += 26;
    return y;
}

/* exactly 80 lines: not over the review bar */
int at_the_bar(int x)
{
    int y = 0;
    y += x * 0;
    y += x * 1;
    y += x * 2;
    y += x * 3;
    y += x * 4;
    y += x * 5;
    y += x * 6;
    y += x * 7;
    y += x * 8;
    y += x * 9;
    y += x * 10;
    y += x * 11;
    y += x * 12;
    y += x * 13;
    y += x * 14;
    y += x * 15;
    y += x * 16;
    y += x * 17;
    y += x * 18;
    y += x * 19;
    y += x * 20;
    y += x * 21;
    y += x * 22;
    y += x * 23;
    y += x * 24;
    y += x * 25;
    y += x * 26;
    y += x * 27;
    y += x * 28;
    y += x * 29;
    y += x * 30;
    y += x * 31;
    y += x * 32;
    y += x * 33;
    y += x * 34;
    y += x * 35;
    y += x * 36;
    y += x * 37;
    y += x * 38;
    y += x * 39;
    y += x * 40;
    y += x * 41;
    y += x * 42;
    y += x * 43;
    y += x * 44;
    y += x * 45;
    y += x * 46;
    y += x * 47;
    y += x * 48;
    y += x * 49;
    y += x * 50;
    y += x * 51;
    y += x * 52;
    y += x * 53;
    y += x * 54;
    y += x * 55;
    y += x * 56;
    y += x * 57;
    y += x * 58;
    y += x * 59;
    y += x * 60;
    y += x * 61;
    y += x * 62;
    y += x * 63;
    y += x * 64;
    y += x * 65;
    y += x * 66;
    y += x * 67;
    y += x * 68;
    y += x * 69;
    y += x * 70;
    y += x * 71;
    y += x * 72;
    y += x * 73;
    y += x * 74;
    return y;
}

/* 125 lines: over the limit */
int too_long(int x)
{
    int y = 0;
    y += x * 0;
    y += x * 1;
    y += x * 2;
    y += x * 3;
    y += x * 4;
    y += x * 5;
    y += x * 6;
    y += x * 7;
    y += x * 8;
    y += x * 9;
    y += x * 10;
    y += x * 11;
    y += x * 12;
    y += x * 13;
    y += x * 14;
    y += x * 15;
    y += x * 16;
    y += x * 17;
    y += x * 18;
    y += x * 19;
    y += x * 20;
    y += x * 21;
    y += x * 22;
    y += x * 23;
    y += x * 24;
    y += x * 25;
    y += x * 26;
    y += x * 27;
    y += x * 28;
    y += x * 29;
    y += x * 30;
    y += x * 31;
    y += x * 32;
    y += x * 33;
    y += x * 34;
    y += x * 35;
    y += x * 36;
    y += x * 37;
    y += x * 38;
    y += x * 39;
    y += x * 40;
    y += x * 41;
    y += x * 42;
    y += x * 43;
    y += x * 44;
    y += x * 45;
    y += x * 46;
    y += x * 47;
    y += x * 48;
    y += x * 49;
    y += x * 50;
    y += x * 51;
    y += x * 52;
    y += x * 53;
    y += x * 54;
    y += x * 55;
    y += x * 56;
    y += x * 57;
    y += x * 58;
    y += x * 59;
    y += x * 60;
    y += x * 61;
    y += x * 62;
    y += x * 63;
    y += x * 64;
    y += x * 65;
    y += x * 66;
    y += x * 67;
    y += x * 68;
    y += x * 69;
    y += x * 70;
    y += x * 71;
    y += x * 72;
    y += x * 73;
    y += x * 74;
    y += x * 75;
    y += x * 76;
    y += x * 77;
    y += x * 78;
    y += x * 79;
    y += x * 80;
    y += x * 81;
    y += x * 82;
    y += x * 83;
    y += x * 84;
    y += x * 85;
    y += x * 86;
    y += x * 87;
    y += x * 88;
    y += x * 89;
    y += x * 90;
    y += x * 91;
    y += x * 92;
    y += x * 93;
    y += x * 94;
    y += x * 95;
    y += x * 96;
    y += x * 97;
    y += x * 98;
    y += x * 99;
    y += x * 100;
    y += x * 101;
    y += x * 102;
    y += x * 103;
    y += x * 104;
    y += x * 105;
    y += x * 106;
    y += x * 107;
    y += x * 108;
    y += x * 109;
    y += x * 110;
    y += x * 111;
    y += x * 112;
    y += x * 113;
    y += x * 114;
    y += x * 115;
    y += x * 116;
    y += x * 117;
    y += x * 118;
    y += x * 119;
    return y;
}
